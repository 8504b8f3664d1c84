import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { RhoError } from '@rho/core';
import { z } from 'zod';
import { explainPolicyCheck } from '../commands/policy-explain.js';
import { chooseDirectory, chooseProfile } from './allowlist.js';
import type { ServeContext } from './serve-context.js';
import { refused, structured } from './tool-results.js';

/** What `rho policy check --json` prints (`PolicyExplanation` of @rho/permissions); its other fields pass through. */
const explanationSchema = z.looseObject({
  kind: z.enum(['shell', 'write', 'sql', 'read']),
  profile: z.string(),
  input: z.string(),
  allowed: z.boolean(),
  rule: z.string(),
  reason: z.string().optional(),
});

/**
 * `policy_check`: what a profile decides for a shell line, an SQL statement, a write or a read,
 * the same answer as `rho policy check --json` (one implementation: `explainPolicyCheck`). Only
 * the profiles and directories the server allows may be asked about.
 */
export function registerPolicyCheck(server: McpServer, context: ServeContext): void {
  server.registerTool(
    'policy_check',
    {
      title: 'What a profile decides',
      description:
        'Whether a permission profile allows a shell command, an SQL statement (with its dialect), a write or a read of a path, and which rule decides; nothing is run. Give exactly one of shell, sql, write, read.',
      inputSchema: {
        profile: z
          .string()
          .optional()
          .describe(`One of: ${context.allow.profiles.join(', ')}`),
        shell: z.string().optional().describe('A command line'),
        sql: z.string().optional().describe('An SQL statement (give dialect)'),
        dialect: z.enum(['sqlite', 'postgres', 'mysql', 'oracle', 'vertica']).optional(),
        write: z.string().optional().describe('A path to write'),
        via: z.enum(['write', 'edit', 'export_query']).optional().describe('The tool that writes (with write)'),
        read: z.string().optional().describe('A path to read'),
        working_dir: z.string().optional().describe('The working directory paths are relative to'),
      },
      outputSchema: explanationSchema,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async (args): Promise<CallToolResult> => {
      const profile = chooseProfile(context.allow, args.profile);
      if ('refusal' in profile) return refused(profile.refusal);
      const directory = chooseDirectory(context.allow, args.working_dir);
      if ('refusal' in directory) return refused(directory.refusal);
      try {
        const explanation = await explainPolicyCheck(
          {
            profile: profile.profile,
            workingDir: directory.directory,
            json: true,
            ...(args.shell === undefined ? {} : { shell: args.shell }),
            ...(args.sql === undefined ? {} : { sql: args.sql }),
            ...(args.dialect === undefined ? {} : { dialect: args.dialect }),
            ...(args.write === undefined ? {} : { write: args.write }),
            ...(args.via === undefined ? {} : { via: args.via }),
            ...(args.read === undefined ? {} : { read: args.read }),
          },
          context.env,
        );
        return structured(JSON.parse(JSON.stringify(explanation)) as Record<string, unknown>);
      } catch (error) {
        if (RhoError.isInstance(error)) return refused(error.message);
        throw error;
      }
    },
  );
}
