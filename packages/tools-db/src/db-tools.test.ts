import { ConfigError } from '@rho/core';
import { approvalPolicy, builtinProfile } from '@rho/permissions';
import { describe, expect, it } from 'vitest';
import { createDbTools, dbTools } from './db-tools.js';
import type { DatabaseConfig } from './database-config.js';
import { loadDriver } from './internal/load-driver.js';

const readonly = builtinProfile('readonly');
const unrestricted = builtinProfile('unrestricted');
if (readonly === undefined || unrestricted === undefined) throw new Error('built-in profiles missing');

const databases: DatabaseConfig[] = [
  { alias: 'warehouse', type: 'postgres', database: 'dw', statementTimeoutSeconds: 30 },
  { alias: 'app', type: 'postgres', database: 'app', statementTimeoutSeconds: 30 },
  { alias: 'shop', type: 'mysql', database: 'shop', statementTimeoutSeconds: 30 },
];

describe('dbTools', () => {
  it('makes one tool per configured dialect, named after it', () => {
    expect(dbTools({ profile: readonly, databases }).map((tool) => tool.name)).toEqual(['postgres', 'mysql']);
    expect(dbTools({ profile: readonly, databases: [] })).toEqual([]);
  });

  it('sends the model this schema and description (snapshot: review any change)', () => {
    const [postgres, mysql] = createDbTools({ profile: readonly, databases });
    expect(postgres?.parameters).toMatchSnapshot('postgres parameters, two aliases');
    expect(postgres?.description).toMatchSnapshot('postgres description, readonly');
    expect(mysql?.parameters.required).toEqual(['operation']);
    const [writable] = createDbTools({ profile: unrestricted, databases: databases.slice(0, 1) });
    expect(writable?.description).toMatch(/Access: full \(writes allowed\)\.$/);
    expect(writable?.annotations).toEqual({ destructive: true });
    expect(postgres?.annotations).toEqual({ readOnly: true });
  });

  it("declares its effects and leaves approval to the agent's policy, which follows the profile", () => {
    const [postgres] = createDbTools({ profile: readonly, databases });
    expect(postgres).not.toHaveProperty('requiresApproval');
    expect(approvalPolicy(readonly)(postgres!, { operation: 'list_tables' }).required).toBe(true);
    const [none] = createDbTools({ profile: unrestricted, databases });
    expect(approvalPolicy(unrestricted)(none!, { operation: 'list_tables' }).required).toBe(false);
  });
});

describe('loadDriver', () => {
  it('names the package to install when a driver is missing', async () => {
    const error = await loadDriver('rho-no-such-driver-package', 'Imaginary').catch((caught: unknown) => caught);
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as ConfigError).message).toBe(
      'The Imaginary driver is not installed: add it with `npm install rho-no-such-driver-package` (or pnpm add / yarn add) next to @rho/tools-db in your app, or with `npm install -g rho-no-such-driver-package` for a rho CLI installed with npm -g.',
    );
    expect((error as ConfigError).code).toBe('driver_missing');
  });
});
