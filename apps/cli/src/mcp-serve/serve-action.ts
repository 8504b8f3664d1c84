import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError, rhoHome } from '@rho/core';
import { cliBinPath, cliVersion } from '../cli-files.js';
import { EXIT } from '../exit-codes.js';
import type { Terminal } from '../terminal.js';
import { serveAllowlist } from './allowlist.js';
import type { ServeContext } from './serve-context.js';
import { onDisconnect } from './serve-context.js';

/** Arguments of `rho mcp serve`. */
export interface McpServeArguments {
  http: boolean;
  host?: string;
  port?: number;
  tokenFile?: string;
  /** Narrow the configured profiles to these. */
  profile?: string[];
  /** Narrow the configured directories to these. */
  dir?: string[];
}

/** The port `rho mcp serve --http` listens on when --port is not given. */
export const DEFAULT_MCP_SERVE_PORT = 7790;

async function serveContext(argv: McpServeArguments, env: NodeJS.ProcessEnv): Promise<ServeContext> {
  const [{ resolveSettings }, { mcpServeSettingsSection }, { allSections }, { createDirectorySource }] =
    await Promise.all([
      import('@rho/core/settings'),
      import('./serve-settings.js'),
      import('../settings.js'),
      import('@rho/monitor'),
    ]);
  const home = rhoHome(env);
  const resolved = await resolveSettings({
    sections: [mcpServeSettingsSection],
    knownSections: allSections,
    home,
    env,
    overrides: {},
  });
  const settings = resolved.settings.mcpServe;
  const allow = serveAllowlist(
    settings,
    {
      ...(argv.profile === undefined ? {} : { profiles: argv.profile }),
      ...(argv.dir === undefined ? {} : { directories: argv.dir }),
    },
    process.cwd(),
  );
  const sessionsDir = join(home, 'sessions');
  return {
    allow,
    settings,
    sessionsDir,
    source: createDirectorySource(sessionsDir),
    child: { command: [process.execPath, cliBinPath()], env, eventsDir: join(home, 'mcp-serve', 'runs') },
    runs: new Map(),
    starting: 0,
    env,
  };
}

/** The HTTP token: read from --token-file when it exists, else made (and written there when named). */
function httpToken(file: string | undefined, make: () => string): string {
  if (file === undefined) return make();
  const path = resolve(file);
  if (existsSync(path)) {
    const token = readFileSync(path, 'utf8').trim();
    if (token.length < 16)
      throw new ConfigError({
        message: `${path} holds no token of at least 16 characters: remove it (rho makes one) or write one.`,
      });
    return token;
  }
  const token = make();
  writeFileSync(path, `${token}\n`, { mode: 0o600, flag: 'wx' });
  return token;
}

/**
 * `rho mcp serve`: an MCP server over stdio (nothing but protocol on stdout) or streamable HTTP
 * (its URL and token on stderr). The SDK loads only here.
 */
export async function mcpServeCommand(
  argv: McpServeArguments,
  terminal: Terminal,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const context = await serveContext(argv, env);
  const version = cliVersion();
  const stopped = new Promise<void>((done) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      done();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    if (!argv.http) {
      // The client closing its end of stdin is its disconnection.
      process.stdin.once('end', stop);
      process.stdin.once('close', stop);
    }
  });
  if (!argv.http) {
    const [{ StdioServerTransport }, { connectionServer }] = await Promise.all([
      import('@modelcontextprotocol/sdk/server/stdio.js'),
      import('./serve.js'),
    ]);
    const server = connectionServer(context, 1, version);
    await server.connect(new StdioServerTransport());
    await stopped;
    await onDisconnect(context, 1);
    await server.close().catch(() => {});
    return EXIT.completed;
  }
  const [{ serveHttp }, { newToken, isLoopback }] = await Promise.all([import('./http.js'), import('@rho/dashboard')]);
  const host = argv.host ?? '127.0.0.1';
  const token = httpToken(argv.tokenFile, newToken);
  const served = await serveHttp(context, { host, port: argv.port ?? DEFAULT_MCP_SERVE_PORT, token, version });
  terminal.stderr.write(
    `rho mcp serve: ${served.url}\n` +
      (isLoopback(host)
        ? ''
        : `Warning: listening on ${host}: anyone who can reach it and has the token can start sessions under ${context.allow.profiles.join(', ')}.\n`) +
      (argv.tokenFile === undefined
        ? `Bearer token (keep it private): ${token}\n`
        : `Bearer token: in ${resolve(argv.tokenFile)}\n`) +
      `Profiles allowed: ${context.allow.profiles.join(', ')}; directories: ${context.allow.directories.join(', ')}\n` +
      'Press Ctrl+C to stop.\n',
  );
  await stopped;
  await served.close();
  terminal.stderr.write('rho mcp serve: stopped.\n');
  return EXIT.completed;
}
