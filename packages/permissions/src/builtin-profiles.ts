import { DEFAULT_DANGEROUS_PATTERNS, DEFAULT_DANGEROUS_TOOLS, type PermissionProfile } from './permission-profile.js';

/** Names of the built-in profiles, plus the documented alias `eval` (= `unrestricted`). */
export const BUILTIN_PROFILES: readonly string[] = [
  'readonly',
  'developer',
  'unrestricted',
  'developer-bash-only',
  'eval',
];

function base(name: string, description: string): PermissionProfile {
  return {
    name,
    description,
    shell: 'restricted',
    fileWrite: 'off',
    database: 'readonly',
    approval: 'dangerous',
    requiredTools: [...DEFAULT_DANGEROUS_TOOLS],
    dangerousPatterns: [...DEFAULT_DANGEROUS_PATTERNS],
    shellTimeoutSeconds: 120,
    bashOnly: false,
    writeRoots: [],
  };
}

/**
 * A fresh copy of a built-in profile, or undefined for an unknown name. `eval` is the alias the
 * original documented for `unrestricted`. The original's `unrestricted` also pinned the shell to
 * `/app` (an evaluation container's layout); rho uses the session's working directory instead.
 */
export function builtinProfile(name: string): PermissionProfile | undefined {
  switch (name) {
    case 'readonly':
      return base('readonly', 'Read-only research profile with restricted shell');
    case 'developer':
      return {
        ...base('developer', 'Development profile with file editing and unrestricted shell'),
        shell: 'unrestricted',
        fileWrite: 'full',
        approval: 'granular',
        requiredTools: ['oracle', 'mysql'],
        shellTimeoutSeconds: 300,
      };
    case 'unrestricted':
    case 'eval':
      return {
        ...base('unrestricted', 'Unrestricted profile for sandboxed and autonomous environments'),
        shell: 'unrestricted',
        fileWrite: 'full',
        database: 'mutations',
        approval: 'none',
        shellTimeoutSeconds: 300,
        // Asked for by name: its shell runs as rho does, outside the sandbox (for environments that are sandboxes already).
        sandbox: 'off',
      };
    case 'developer-bash-only':
      return {
        ...base('developer-bash-only', 'Developer shell mode with bash-only tools'),
        shell: 'unrestricted',
        shellTimeoutSeconds: 300,
        bashOnly: true,
      };
    default:
      return undefined;
  }
}
