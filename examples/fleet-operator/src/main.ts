#!/usr/bin/env node
// rho-fleet-operator-example list [--status S]... [--host H] [--label K=V] [--json]
// rho-fleet-operator-example cancel ID|PREFIX
// rho-fleet-operator-example cancel --all [--host H] [--label K=V]
//
// The fleet is the one `rho` would use: --url, else RHO_FLEET_URL (`${NAME}` in it is read from
// the environment); --schema when it is not the default `rho_fleet`.
import { parseArgs } from 'node:util';
import { openFleetSessionSource, resolveFleetConfig } from '@rho/fleet';
import { cancelSessions, listSessions } from './operator.js';
import type { Output } from './operator.js';

const output: Output = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
};

async function main(): Promise<number> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      url: { type: 'string' },
      schema: { type: 'string' },
      status: { type: 'string', multiple: true },
      host: { type: 'string' },
      label: { type: 'string' },
      json: { type: 'boolean', default: false },
      all: { type: 'boolean', default: false },
    },
  });
  const [command, prefix] = positionals;
  if (command !== 'list' && command !== 'cancel') {
    output.err('Use: list [--status S] [--host H] [--label K=V] [--json] | cancel ID | cancel --all\n');
    return 2;
  }
  const config = resolveFleetConfig({
    ...(values.url === undefined ? {} : { flag: values.url }),
    env: process.env,
    ...(values.schema === undefined ? {} : { userConfig: { schema: values.schema } }),
  });
  if (config === undefined) {
    output.err('No fleet: pass --url postgres://USER@HOST/DB or set RHO_FLEET_URL.\n');
    return 2;
  }
  const source = await openFleetSessionSource(config, { maxConnections: 2, connectTimeoutSeconds: 5 });
  try {
    if (command === 'list')
      return await listSessions(
        source,
        {
          ...(values.status === undefined ? {} : { status: values.status }),
          ...(values.host === undefined ? {} : { hostname: values.host }),
          ...(values.label === undefined ? {} : { label: values.label }),
        },
        { json: values.json },
        output,
      );
    return await cancelSessions(
      source,
      {
        ...(prefix === undefined ? {} : { prefix }),
        all: values.all,
        ...(values.host === undefined ? {} : { hostname: values.host }),
        ...(values.label === undefined ? {} : { label: values.label }),
      },
      output,
    );
  } finally {
    await source.close();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    // A session the fleet does not know, the database away, a malformed url: one line, no stack.
    output.err(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
