import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Fleet, FleetSession } from '@rho/fleet';

/** Records read per query when a whole mirrored trace is read. */
const PAGE = 1_000;

/** A session's whole mirrored trace, as the lines of a trace.jsonl (in sequence order). */
export async function mirroredTrace(fleet: Fleet, sessionId: string): Promise<string> {
  const lines: string[] = [];
  let after = 0;
  for (;;) {
    const page = await fleet.readRecords(sessionId, after, PAGE);
    for (const { record, seq } of page) {
      lines.push(JSON.stringify(record));
      after = seq;
    }
    if (page.length < PAGE) break;
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

/**
 * A fleet session copied into `root/<id>/` as a session directory (trace.jsonl from the mirror,
 * meta.json from the registry), for what reads session directories (the coordinator of `connect`).
 */
export async function materializeSession(
  fleet: Fleet,
  session: FleetSession,
  root: string,
): Promise<{ id: string; directory: string }> {
  const directory = join(root, session.id);
  mkdirSync(directory, { recursive: true });
  writeFileSync(join(directory, 'trace.jsonl'), await mirroredTrace(fleet, session.id));
  writeFileSync(
    join(directory, 'meta.json'),
    `${JSON.stringify({
      id: session.id,
      status: session.recordedStatus,
      started_at: session.startedAt,
      updated_at: session.updatedAt,
      hostname: session.host,
      ...(session.heartbeatAt === undefined ? {} : { heartbeat_at: session.heartbeatAt }),
      ...(session.model === undefined ? {} : { model: session.model }),
      ...(session.profile === undefined ? {} : { profile: session.profile }),
      ...(session.firstPrompt === undefined ? {} : { first_prompt: session.firstPrompt }),
      ...(session.parentId === undefined ? {} : { parent_id: session.parentId }),
    })}\n`,
  );
  if (session.model !== undefined)
    writeFileSync(join(directory, 'config.yaml'), `model: ${JSON.stringify(session.model)}\n`);
  return { id: session.id, directory };
}
