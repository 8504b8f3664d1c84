import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeSessionSettings } from '@rho/core/settings';
import type { ListedSession } from './listed-session.js';
import type { SessionSource } from './session-source.js';

/**
 * A session of any {@link SessionSource} copied into `root/<id>/` as a session directory: its
 * trace as the source holds it (`trace.jsonl`), `meta.json` from its listing and a `config.yaml`
 * naming its model, so that what reads session directories (`readSessionContext`, the coordinator
 * of `rho connect`, `sessionToAtif`) reads a fleet's session as it reads a local one.
 */
export async function copySession(
  source: SessionSource,
  session: ListedSession,
  root: string,
): Promise<{ id: string; directory: string }> {
  const directory = join(root, session.id);
  mkdirSync(directory, { recursive: true });
  writeFileSync(join(directory, 'trace.jsonl'), await source.readTrace(session.id));
  writeFileSync(
    join(directory, 'meta.json'),
    `${JSON.stringify({
      id: session.id,
      status: session.recordedStatus,
      started_at: session.startedAt,
      ...(session.updatedAt === undefined ? {} : { updated_at: session.updatedAt }),
      ...(session.hostname === undefined ? {} : { hostname: session.hostname }),
      ...(session.heartbeatAt === undefined ? {} : { heartbeat_at: session.heartbeatAt }),
      ...(session.model === undefined ? {} : { model: session.model }),
      ...(session.profile === undefined ? {} : { profile: session.profile }),
      ...(session.firstPrompt === undefined ? {} : { first_prompt: session.firstPrompt }),
      ...(session.parentId === undefined ? {} : { parent_id: session.parentId }),
    })}\n`,
  );
  // Through the one writer of a session's saved settings.
  if (session.model !== undefined) writeSessionSettings(directory, { model: session.model });
  return { id: session.id, directory };
}
