import { cpSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveSessionWithRhoAgent, rhoAgentSessionsDir, rhoAgentSessionStore } from './rho-agent-sessions.js';
import { SessionStore } from './session-store.js';
import { pythonTracesDir } from './testing/fixtures.js';

function setUp(): { store: SessionStore; legacy: string } {
  const root = mkdtempSync(join(tmpdir(), 'rho-legacy-sessions-'));
  const legacy = rhoAgentSessionsDir(join(root, 'home'));
  cpSync(join(pythonTracesDir, 'a-readonly-text'), join(legacy, 'aa11bb22'), { recursive: true });
  cpSync(join(pythonTracesDir, 'e-multiturn-resume'), join(legacy, 'cc33dd44'), { recursive: true });
  const store = new SessionStore(join(root, 'rho', 'sessions'));
  return { store, legacy };
}

describe("rho-agent's sessions directory", () => {
  it('is ~/.config/rho-agent/sessions', () => {
    expect(rhoAgentSessionsDir('/home/someone')).toBe('/home/someone/.config/rho-agent/sessions');
  });

  it("resolves ids, prefixes and latest there when rho's store has no such session", () => {
    const { store, legacy } = setUp();
    expect(resolveSessionWithRhoAgent(store, 'cc33', legacy)).toEqual({
      directory: join(legacy, 'cc33dd44'),
      fromRhoAgent: true,
    });
    expect(resolveSessionWithRhoAgent(store, 'aa11bb22', legacy)).toEqual({
      directory: join(legacy, 'aa11bb22'),
      fromRhoAgent: true,
    });
    expect(resolveSessionWithRhoAgent(store, 'latest', legacy).fromRhoAgent).toBe(true);
    expect(() => resolveSessionWithRhoAgent(store, 'ffff', legacy)).toThrow(
      /Session not found: ffff\b.*rho-agent's sessions in .* were searched too/,
    );
  });

  it("prefers rho's own sessions, and keeps an ambiguous prefix of rho's an error", () => {
    const { store, legacy } = setUp();
    const own = store.create({ id: 'cc33ffff' });
    expect(resolveSessionWithRhoAgent(store, 'cc33', legacy)).toEqual({
      directory: own.directory,
      fromRhoAgent: false,
    });
    expect(resolveSessionWithRhoAgent(store, 'latest', legacy)).toEqual({
      directory: own.directory,
      fromRhoAgent: false,
    });
    store.create({ id: 'cc33eeee' });
    expect(() => resolveSessionWithRhoAgent(store, 'cc33', legacy)).toThrow(/ambiguous/i);
  });

  it('is not a second source when it is missing or is the store itself', () => {
    const { store, legacy } = setUp();
    expect(rhoAgentSessionStore(store, join(legacy, 'missing'))).toBeUndefined();
    mkdirSync(store.baseDir, { recursive: true });
    expect(rhoAgentSessionStore(new SessionStore(legacy), legacy)).toBeUndefined();
    expect(rhoAgentSessionStore(store, legacy)?.baseDir).toBe(legacy);
  });
});
