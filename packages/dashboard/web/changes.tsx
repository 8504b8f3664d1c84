import { useEffect, useMemo, useState } from 'preact/hooks';
import type { ChangedFile, SessionChanges } from './api.js';
import { getJson } from './api.js';
import { changeStats } from './format.js';
import { ACTIVE_STATUSES } from './statuses.js';

/** Files of more lines than this start folded (when the diff is long). */
const FOLD_LINES = 400;

/** One file's part of a unified diff. */
interface FileDiff {
  /** The path after the change (or before, for a deleted file). */
  path: string;
  lines: string[];
  binary: boolean;
}

/** Splits a unified diff at each `diff --git` header. */
export function splitPatch(patch: string): FileDiff[] {
  const parts: FileDiff[] = [];
  let current: FileDiff | undefined;
  const lines = patch.split('\n');
  if (lines.at(-1) === '') lines.pop();
  for (const line of lines) {
    if (line.startsWith('diff --git ')) {
      const header = line.slice('diff --git '.length);
      const at = header.lastIndexOf(' b/');
      current = { path: at < 0 ? header : header.slice(at + 3), lines: [line], binary: false };
      parts.push(current);
      continue;
    }
    if (current === undefined) {
      current = { path: '', lines: [], binary: false };
      parts.push(current);
    }
    current.lines.push(line);
    if (line.startsWith('Binary file')) current.binary = true;
  }
  return parts;
}

/** The class of a diff line: added, deleted, hunk header, file header, or context. */
function lineClass(line: string, inHeader: boolean): string {
  if (inHeader) return 'diff-meta';
  if (line.startsWith('@@')) return 'diff-hunk';
  if (line.startsWith('+')) return 'diff-add';
  if (line.startsWith('-')) return 'diff-del';
  if (line.startsWith('\\')) return 'diff-meta';
  return '';
}

function Lines({ lines }: { lines: string[] }) {
  let header = true;
  return (
    <pre class="diff">
      {lines.map((line, index) => {
        if (line.startsWith('@@')) header = false;
        return (
          <span key={index} class={lineClass(line, header)}>
            {line}
            {'\n'}
          </span>
        );
      })}
    </pre>
  );
}

/** The `error` of the server's JSON answer (getJson's message is the status and the body), else the failure. */
function serverError(failure: unknown): string {
  const text = failure instanceof Error ? failure.message : String(failure);
  try {
    const body = JSON.parse(text.slice(text.indexOf('{'))) as { error?: unknown };
    if (typeof body.error === 'string') return body.error;
  } catch {
    // Not JSON: the message as it is.
  }
  return text;
}

const STATUS_LABEL: Record<ChangedFile['status'], string> = {
  added: 'added',
  modified: 'modified',
  deleted: 'deleted',
  renamed: 'renamed',
  mode: 'mode changed',
  type: 'type changed',
};

/**
 * The session's changes: totals, files, the unified diff coloured (each file foldable), and the
 * commands that decide them, as text to copy: the dashboard applies and discards nothing.
 */
export function ChangesSection({ id, status }: { id: string; status: string | undefined }) {
  const [changes, setChanges] = useState<SessionChanges | undefined>(undefined);
  const [error, setError] = useState('');
  const live = status !== undefined && ACTIVE_STATUSES.has(status);
  const [loads, setLoads] = useState(0);
  useEffect(() => {
    let cancelled = false;
    getJson<SessionChanges>(`/api/sessions/${encodeURIComponent(id)}/changes`).then(
      (loaded) => {
        if (cancelled) return;
        setChanges(loaded);
        setError('');
      },
      (failure: unknown) => {
        if (cancelled) return;
        setError(serverError(failure));
      },
    );
    return () => {
      cancelled = true;
    };
    // Again when the run ends (its last files), and on request.
  }, [id, live, loads]);
  const parts = useMemo(() => splitPatch(changes?.patch ?? ''), [changes]);
  const byPath = useMemo(() => new Map((changes?.files ?? []).map((file) => [file.path, file])), [changes]);
  const fold = parts.reduce((sum, part) => sum + part.lines.length, 0) > FOLD_LINES * 4;
  return (
    <section class="changes" data-testid="changes">
      <h2>
        Changes{' '}
        <button class="small" onClick={() => setLoads((value) => value + 1)}>
          Refresh
        </button>
      </h2>
      {error !== '' && <p class="empty">{error}</p>}
      {changes !== undefined && (
        <>
          <p class="changes-summary">
            {changes.stats !== null && <strong data-testid="changes-stats">{changeStats(changes.stats)}</strong>}
            {changes.workspace !== null && (
              <span>
                {' '}
                in an isolated workspace (
                {changes.workspace.kind === 'copy' ? 'a copy' : `branch ${changes.workspace.branch ?? '?'}`}),{' '}
                {changes.workspace.state}; it applies to <span class="mono">{changes.workspace.original}</span>
              </span>
            )}
            {changes.checkpoints !== undefined && (
              <span>
                {' '}
                in place in <span class="mono">{changes.checkpoints.workingDir}</span>, from the checkpoint of turn{' '}
                {changes.checkpoints.from.turn} to that of turn {changes.checkpoints.to.turn}
              </span>
            )}
            {live && <span> (the run goes on: these are its changes so far)</span>}
          </p>
          {changes.note !== undefined && (
            // A run that kept no record of its files (most runs in place) says so quietly.
            <p class={changes.workspace === null && changes.checkpoints === undefined ? 'empty' : 'notice'}>
              {changes.note}
            </p>
          )}
          <Decide id={id} changes={changes} />
          {changes.files.length > 0 && <FileList files={changes.files} />}
          {parts.map((part, index) => {
            const file = byPath.get(part.path);
            return (
              <details class="diff-file" key={`${index}:${part.path}`} open={!fold || part.lines.length <= FOLD_LINES}>
                <summary>
                  <span class="mono">{part.path}</span>{' '}
                  {part.binary || file?.binary === true ? (
                    <span class="diff-binary">binary</span>
                  ) : (
                    file !== undefined && (
                      <>
                        <span class="diff-add">+{file.additions}</span> <span class="diff-del">-{file.deletions}</span>
                      </>
                    )
                  )}
                </summary>
                <Lines lines={part.lines} />
              </details>
            );
          })}
        </>
      )}
    </section>
  );
}

function FileList({ files }: { files: ChangedFile[] }) {
  return (
    <div class="table-wrap">
      <table class="changed-files">
        <tbody>
          {files.map((file) => (
            <tr key={file.path}>
              <td class={`file-status file-${file.status}`}>{STATUS_LABEL[file.status]}</td>
              <td class="mono file-path">
                {file.oldPath === undefined ? file.path : `${file.oldPath} → ${file.path}`}
              </td>
              {file.binary ? (
                <td class="diff-binary" colSpan={2}>
                  binary
                </td>
              ) : (
                <>
                  <td class="number diff-add">+{file.additions}</td>
                  <td class="number diff-del">-{file.deletions}</td>
                </>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The commands that decide the changes, to copy into a terminal. */
function Decide({ id, changes }: { id: string; changes: SessionChanges }) {
  const commands =
    changes.workspace?.state === 'active'
      ? [`rho diff ${id}`, `rho apply ${id}`, `rho discard ${id}`]
      : changes.checkpoints !== undefined
        ? [`rho undo ${id}`]
        : [];
  if (commands.length === 0) return null;
  return (
    <div class="decide">
      <p>
        The dashboard shows these changes; it does not apply, discard or undo them.{' '}
        {changes.workspace === null
          ? 'The run changed its working directory itself; to go back a turn, in a terminal:'
          : 'Decide in a terminal:'}
      </p>
      <ul>
        {commands.map((command) => (
          <li key={command}>
            <Copyable text={command} />
          </li>
        ))}
      </ul>
    </div>
  );
}

function Copyable({ text }: { text: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <span class="copyable">
      <code>{text}</code>
      <button
        class="small"
        onClick={() =>
          void navigator.clipboard?.writeText(text).then(
            () => setCopied(true),
            () => setCopied(false),
          )
        }
      >
        {copied ? 'Copied' : 'Copy'}
      </button>
    </span>
  );
}
