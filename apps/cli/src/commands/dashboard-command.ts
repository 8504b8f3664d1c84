import { resolve } from 'node:path';
import type { DashboardSource } from '@rho/dashboard';
import { operatorFleetConfig } from '../fleet/operator-fleet.js';
import type { Terminal } from '../terminal.js';

/** Arguments of `rho dashboard`. */
export interface DashboardArguments {
  dir?: string;
  /** The global `--fleet` (a PostgreSQL url; `''` switches the fleet off). */
  fleet?: string;
  port?: number;
  host?: string;
}

/** The port `rho dashboard` tries first when --port is not given. */
export const DEFAULT_DASHBOARD_PORT = 7788;

/**
 * `rho dashboard`: serves the web dashboard of a sessions directory until Ctrl+C (or SIGTERM),
 * and prints its URL with the access token, as Jupyter does. `@rho/dashboard` is loaded here, only
 * when the command runs.
 */
export async function dashboardCommand(
  argv: DashboardArguments,
  terminal: Terminal,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const [{ createDashboardSource, createFileSource, startDashboard }, { rhoHome }, { requireDirectory }] =
    await Promise.all([import('@rho/dashboard'), import('@rho/core'), import('./monitor/monitor-actions.js')]);
  const explicit = argv.dir !== undefined && argv.dir !== '';
  // A fleet (--fleet, RHO_FLEET_URL, fleet: in config.yaml) shows every node's sessions, unless a
  // directory is named: then that directory, as without a fleet.
  const fleetConfig = explicit ? undefined : await operatorFleetConfig(argv.fleet, env);
  let source: DashboardSource;
  let closeFleet = async (): Promise<void> => {};
  let served: string;
  if (fleetConfig !== undefined) {
    const { openFleetSessionSource } = await import('@rho/fleet');
    const fleet = await openFleetSessionSource(fleetConfig, { connectTimeoutSeconds: 5 });
    closeFleet = () => fleet.close().catch(() => {});
    served = fleet.description;
    source = createDashboardSource(fleet);
  } else {
    const directory = explicit ? resolve(argv.dir!) : resolve(rhoHome(env), 'sessions');
    requireDirectory(directory, explicit);
    served = directory;
    source = createFileSource(directory);
  }
  const host = argv.host ?? '127.0.0.1';
  const start = (port: number) => startDashboard({ source, host, port, allowRemote: argv.host !== undefined });
  let server;
  try {
    if (argv.port !== undefined) server = await start(argv.port);
    else {
      try {
        server = await start(DEFAULT_DASHBOARD_PORT);
      } catch {
        // The usual port is taken (another dashboard?): any free one will do.
        server = await start(0);
      }
    }
  } catch (error) {
    await closeFleet();
    throw error;
  }
  terminal.stderr.write(
    `rho dashboard: serving ${served}\n` +
      (argv.host !== undefined && argv.host !== '127.0.0.1' && argv.host !== 'localhost'
        ? `Warning: listening on ${host}: anyone who can reach it and has the token can cancel and steer your agents.\n`
        : '') +
      `Open this URL (it carries the access token; keep it private):\n`,
  );
  terminal.stdout.write(`    ${server.url}\n`);
  terminal.stderr.write('Press Ctrl+C to stop.\n');
  await new Promise<void>((done) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      done();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await server.close();
  await closeFleet();
  terminal.stderr.write('rho dashboard: stopped.\n');
  return 0;
}
