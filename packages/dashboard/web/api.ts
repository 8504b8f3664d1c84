/** The access token the server put in the page, sent as X-Rho-Token with every control request. */
export const token = document.querySelector<HTMLMetaElement>('meta[name="rho-token"]')?.content ?? '';

/** One session row, as the server sends it. */
export interface Session {
  id: string;
  status: string;
  statusReason?: string;
  model?: string;
  profile?: string;
  hostname?: string;
  startedAt: string;
  updatedAt?: string;
  inputTokens?: number;
  outputTokens?: number;
  /** Null when calls were made and none was priced (the cost is unknown). */
  costUsd?: number | null;
  firstPrompt?: string;
  parentId?: string;
  depth?: number;
  /** What an isolated run changed in its workspace (meta.json's `changes`), once a run ended. */
  changes?: ChangeStats;
}

/** "N files changed, +a/-d". */
export interface ChangeStats {
  files: number;
  additions: number;
  deletions: number;
}

/** One changed file (`GET /api/sessions/:id/changes`). */
export interface ChangedFile {
  path: string;
  oldPath?: string;
  status: 'added' | 'modified' | 'deleted' | 'renamed' | 'mode' | 'type';
  additions: number;
  deletions: number;
  binary: boolean;
}

/** What a session changed (`GET /api/sessions/:id/changes`). */
export interface SessionChanges {
  workspace: {
    mode: 'isolated';
    kind: 'git-worktree' | 'copy';
    branch?: string;
    state: 'active' | 'applied' | 'discarded';
    original: string;
    decidedAt?: string;
  } | null;
  checkpoints?: {
    workingDir: string;
    count: number;
    from: { turn: number; createdAt: string };
    to: { turn: number; createdAt: string };
  };
  stats: ChangeStats | null;
  files: ChangedFile[];
  patch: string;
  patchBytes: number;
  truncated: boolean;
  note?: string;
}

/** A page of sessions. */
export interface SessionPage {
  rows: Session[];
  total: number;
  all: number;
  facets: { models: string[]; profiles: string[]; statuses: string[] };
}

/** A trace record (the server checked its shape). */
export type TraceRecord = { type: string; ts?: string } & Record<string, unknown>;

/** GETs JSON from the API. */
export async function getJson<T>(path: string): Promise<T> {
  const response = await fetch(path, { credentials: 'same-origin' });
  if (!response.ok) throw new Error(`${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/** Sends a control request; resolves to the server's message. */
export async function sendControl(id: string, action: string, text?: string): Promise<string> {
  const response = await fetch(`/api/sessions/${encodeURIComponent(id)}/control`, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', 'X-Rho-Token': token },
    body: JSON.stringify(text === undefined ? { action } : { action, text }),
  });
  const body = (await response.json()) as { message?: string; error?: string };
  if (!response.ok) throw new Error(body.error ?? `HTTP ${response.status}`);
  return body.message ?? action;
}

/** A tool call that waits for a person's answer (`GET /api/sessions/:id/approvals`). */
export interface PendingCall {
  toolCallId: string;
  toolName: string;
  arguments: unknown;
  /** The rule and risk line: why the profile asks. */
  reason?: string;
  /** The dangerous pattern the call matched: no "always this tool" answer covers it. */
  dangerous?: string;
  requestedAt: string;
  expiresAt?: string;
  onTimeout?: 'deny' | 'approve';
}

/** A waiting call with its session (`GET /api/approvals`). */
export interface WaitingCall extends PendingCall {
  sessionId: string;
  sessionStatus: string;
  firstPrompt?: string;
}

/** An answer to a waiting call, as the page sends it. */
export interface CallAnswer {
  toolCallId: string;
  decision: 'approve' | 'deny';
  scope?: 'once' | 'call' | 'tool';
  reason?: string;
}

/** Answers a waiting call; resolves to the server's message, rejects with its error (a 409 names the answer that stands). */
export async function sendApproval(id: string, answer: CallAnswer): Promise<string> {
  const response = await fetch(`/api/sessions/${encodeURIComponent(id)}/approvals`, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', 'X-Rho-Token': token },
    body: JSON.stringify(answer),
  });
  const body = (await response.json()) as { message?: string; error?: string };
  if (!response.ok) throw new Error(body.error ?? `HTTP ${response.status}`);
  return body.message ?? answer.decision;
}
