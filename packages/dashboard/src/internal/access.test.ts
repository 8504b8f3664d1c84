import { describe, expect, it } from 'vitest';
import { hostAllowed, isLoopback, tokenMatches } from './access.js';

describe('access checks', () => {
  it('accepts only this server’s names in the Host header', () => {
    expect(hostAllowed('127.0.0.1:8080', '127.0.0.1', 8080)).toBe(true);
    expect(hostAllowed('localhost:8080', '127.0.0.1', 8080)).toBe(true);
    expect(hostAllowed('[::1]:8080', '127.0.0.1', 8080)).toBe(true);
    expect(hostAllowed('127.0.0.1:9090', '127.0.0.1', 8080)).toBe(false);
    expect(hostAllowed('attacker.example:8080', '127.0.0.1', 8080)).toBe(false);
    expect(hostAllowed(undefined, '127.0.0.1', 8080)).toBe(false);
    expect(hostAllowed('10.0.0.5:8080', '10.0.0.5', 8080)).toBe(true);
    expect(hostAllowed('attacker.example:8080', '10.0.0.5', 8080)).toBe(false);
    expect(hostAllowed('anything:8080', '0.0.0.0', 8080)).toBe(true);
  });

  it('tells loopback addresses apart and compares tokens whole', () => {
    expect(isLoopback('127.0.0.1')).toBe(true);
    expect(isLoopback('127.1.2.3')).toBe(true);
    expect(isLoopback('0.0.0.0')).toBe(false);
    expect(isLoopback('192.168.1.2')).toBe(false);
    expect(tokenMatches('abc', 'abc')).toBe(true);
    expect(tokenMatches('abc', 'ab')).toBe(false);
    expect(tokenMatches('abc', undefined)).toBe(false);
  });
});
