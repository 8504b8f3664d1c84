// No imports: bin.ts checks the running Node with this before it loads anything that could fail
// on an older one (with a stack trace about a missing API instead of a word about the version).

/** The oldest Node rho runs on (package.json `engines`: pg-boss 12 and the OpenTelemetry SDK 3 need it). */
export const MIN_NODE = { major: 22, minor: 15 } as const;

/**
 * The one line rho prints when started on a Node older than {@link MIN_NODE}, or undefined when
 * this Node is new enough. `version` is `process.versions.node`.
 */
export function unsupportedNodeMessage(version: string, execPath: string): string | undefined {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  if (major > MIN_NODE.major || (major === MIN_NODE.major && minor >= MIN_NODE.minor)) return undefined;
  return `rho: needs Node.js ${MIN_NODE.major}.${MIN_NODE.minor} or newer, and this is Node.js ${version} (${execPath}). Install Node.js 22 or 24 (nodejs.org, or your package manager) and run rho with it.`;
}
