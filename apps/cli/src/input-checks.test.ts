import { describe, expect, it } from 'vitest';
import { didYouMean, editDistance } from './did-you-mean.js';
import {
  checkBaseUrl,
  checkChoice,
  checkPositiveInteger,
  checkPositiveNumber,
  checkVars,
  REASONING_EFFORTS,
} from './input-checks.js';

describe('checkBaseUrl', () => {
  it('takes http(s) URLs with a host', () => {
    expect(checkBaseUrl(' http://localhost:11434/v1 ', '--base-url')).toBe('http://localhost:11434/v1');
    expect(checkBaseUrl('https://api.openai.com/v1', '--base-url')).toBe('https://api.openai.com/v1');
  });
  it('refuses a URL without a scheme and suggests one', () => {
    expect(() => checkBaseUrl('localhost:11434/v1', '--base-url')).toThrow(
      /--base-url must be an http:\/\/ or https:\/\/ URL.*did you mean http:\/\/localhost:11434\/v1\?/,
    );
    expect(() => checkBaseUrl('api.example.com', 'OPENAI_BASE_URL')).toThrow(
      /OPENAI_BASE_URL .*did you mean http:\/\/api\.example\.com\?/,
    );
  });
  it('refuses other schemes and malformed URLs', () => {
    expect(() => checkBaseUrl('ftp://example.com', '--base-url')).toThrow(
      /must use http:\/\/ or https:\/\/ \(got ftp:\/\/\)/,
    );
    expect(() => checkBaseUrl('http://exa mple.com', '--base-url')).toThrow(/not a valid URL/);
  });
});

describe('numbers and choices', () => {
  it('checks whole numbers', () => {
    expect(checkPositiveInteger('20', '--max-turns', 20)).toBe(20);
    for (const bad of ['abc', '0', '-3', '2.5', '', 'NaN'])
      expect(() => checkPositiveInteger(bad, '--max-turns', 20)).toThrow(
        /--max-turns must be a whole number of at least 1, for example --max-turns 20/,
      );
  });
  it('checks positive numbers', () => {
    expect(checkPositiveNumber('0.25', '--max-cost', 0.5)).toBe(0.25);
    for (const bad of ['0', '-1', 'cheap', 'Infinity'])
      expect(() => checkPositiveNumber(bad, '--max-cost', 0.5)).toThrow(/--max-cost must be a number above 0/);
  });
  it('checks a choice and suggests the closest', () => {
    expect(checkChoice('High', REASONING_EFFORTS, '--reasoning-effort')).toBe('high');
    expect(() => checkChoice('extreme', REASONING_EFFORTS, '--reasoning-effort')).toThrow(
      /must be one of none, minimal, low, medium, high, xhigh \(got "extreme"\)\.$/,
    );
    expect(() => checkChoice('meduim', REASONING_EFFORTS, '--reasoning-effort')).toThrow(/did you mean medium\?/);
  });
  it('checks --var items', () => {
    expect(checkVars(undefined)).toEqual([]);
    expect(checkVars('who=ZELDA')).toEqual(['who=ZELDA']);
    expect(checkVars(['a=1', 'b=x=y'])).toEqual(['a=1', 'b=x=y']);
    expect(() => checkVars(['hi'])).toThrow(/--var takes key=value, for example --var who=ZELDA \(got "hi"\)/);
    expect(() => checkVars(['=x'])).toThrow(/--var takes key=value/);
  });
});

describe('didYouMean', () => {
  it('suggests near misses and nothing for far ones', () => {
    expect(didYouMean('modle', ['model', 'profile'])).toBe('model');
    expect(didYouMean('wacth', ['watch', 'ps'])).toBe('watch');
    expect(didYouMean('pss', ['ps', 'pause'])).toBe('ps');
    expect(didYouMean('banana', ['model', 'profile'])).toBeUndefined();
    expect(didYouMean('p', ['ps'])).toBe('ps');
  });
  it('counts an adjacent swap as one edit', () => {
    expect(editDistance('ab', 'ba')).toBe(1);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });
});
