import type { ListedSession } from '@rho/monitor';

/** A session of a directory in `ps --json`: the meta.json field names (snake_case), plus the live status. */
export function directoryJson(session: ListedSession): Record<string, unknown> {
  return {
    id: session.id,
    status: session.status,
    recorded_status: session.recordedStatus,
    ...(session.status === 'dead' && session.statusReason !== undefined ? { dead_reason: session.statusReason } : {}),
    ...(session.status === 'parked' && session.statusReason !== undefined
      ? { parked_reason: session.statusReason }
      : {}),
    ...(session.problem === undefined ? {} : { problem: session.problem }),
    model: session.model ?? null,
    profile: session.profile ?? null,
    started_at: session.startedAt,
    updated_at: session.updatedAt ?? null,
    heartbeat_at: session.heartbeatAt ?? null,
    pid: session.pid ?? null,
    hostname: session.hostname ?? null,
    first_prompt: session.firstPrompt ?? null,
    cost_usd: session.costUsd ?? null,
    parent_id: session.parentId ?? null,
    directory: session.directory,
    changes: session.changes ?? null,
    labels: session.labels ?? {},
  };
}

/** A session of a fleet in `ps --json`: snake_case, with its host, labels, usage and mirrored records. */
export function fleetJson(session: ListedSession): Record<string, unknown> {
  return {
    id: session.id,
    status: session.status,
    recorded_status: session.recordedStatus,
    host: session.hostname,
    pid: session.pid ?? null,
    cwd: session.cwd ?? null,
    model: session.model ?? null,
    profile: session.profile ?? null,
    labels: session.labels ?? {},
    started_at: session.startedAt,
    updated_at: session.updatedAt,
    heartbeat_at: session.heartbeatAt ?? null,
    first_prompt: session.firstPrompt ?? null,
    input_tokens: session.inputTokens ?? 0,
    output_tokens: session.outputTokens ?? 0,
    cost_usd: session.costUsd ?? null,
    unpriced_calls: session.unpricedCalls ?? 0,
    parent_id: session.parentId ?? null,
    records: session.records ?? 0,
  };
}
