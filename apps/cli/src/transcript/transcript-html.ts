import type { Transcript, TranscriptEntry, TranscriptToolCall } from './transcript.js';
import { argsShort, argsText, bounded, headerRows, statusText } from './transcript-text.js';

/** Every text of the page goes through this: nothing of the trace is ever markup. */
function escape(value: string): string {
  return value.replace(/[&<>"']/g, (mark) => `&#${mark.charCodeAt(0)};`);
}

/** A preformatted block, cut when too long (with a note saying so). */
function pre(content: string, className = ''): string {
  const { text, cut } = bounded(content);
  const block = `<pre${className === '' ? '' : ` class="${className}"`}>${escape(text)}</pre>`;
  return cut === undefined ? block : `${block}<p class="cut">${escape(cut)}</p>`;
}

function toolBlock(call: TranscriptToolCall): string {
  const summary = `tool(${call.name}) ${argsShort(call.args)}`.trim();
  return [
    `<details class="tool tool-${call.status}"><summary>${escape(summary)}</summary>`,
    '<h4>Arguments</h4>',
    pre(argsText(call.args)),
    call.childSessionId === undefined ? '' : `<p>Child session: <code>${escape(call.childSessionId)}</code></p>`,
    `<h4>Output <span class="status">(${escape(statusText(call.status, call.reason))})</span></h4>`,
    call.output === undefined ? '<p class="note">No output recorded.</p>' : pre(call.output, 'output'),
    call.outputDetails === undefined ? '' : pre(call.outputDetails, 'details'),
    '</details>',
  ].join('\n');
}

function entryBlock(entry: TranscriptEntry, run: { count: number }): string {
  switch (entry.kind) {
    case 'run':
      run.count += 1;
      return `<h2>Run ${run.count}${entry.ts === undefined ? '' : ` · ${escape(entry.ts)}`}</h2>`;
    case 'user':
      return `<section class="user"><h3>User</h3>${pre(entry.text, 'text')}</section>`;
    case 'system':
      return `<details class="system"><summary>System message</summary>${pre(entry.text)}</details>`;
    case 'assistant':
      return [
        '<section class="assistant"><h3>Assistant</h3>',
        entry.reasoning === undefined
          ? ''
          : `<details class="reasoning"><summary>Reasoning</summary>${pre(entry.reasoning)}</details>`,
        // Kept as the Markdown the model wrote, shown as text.
        entry.text === '' ? '' : pre(entry.text, 'text markdown'),
        '</section>',
      ].join('');
    case 'tool':
      return toolBlock(entry);
    case 'directive':
      return `<section class="directive"><h3>Operator directive${entry.delivered ? '' : ' (not delivered)'}</h3>${pre(entry.text, 'text')}</section>`;
    case 'approval_requested':
      return `<p class="approval">Approval requested for tool(${escape(entry.tool)})${entry.reason === undefined ? '' : `: ${escape(entry.reason)}`}</p>`;
    case 'approval': {
      const verb = entry.decision === 'approve' ? 'Approved' : entry.decision === 'deny' ? 'Denied' : entry.decision;
      const who = entry.by ?? entry.source;
      return `<p class="approval approval-${escape(entry.decision)}"><strong>${escape(verb)}</strong> tool(${escape(entry.tool)})${
        who === undefined ? '' : ` by ${escape(who)}`
      }${entry.scope === undefined ? '' : ` (scope: ${escape(entry.scope)})`}${entry.reason === undefined ? '' : `: ${escape(entry.reason)}`}</p>`;
    }
    case 'compaction': {
      const tokens =
        entry.tokensBefore === undefined ? '' : `, ${entry.tokensBefore} → ${entry.tokensAfter ?? '?'} tokens`;
      return `<section class="compaction"><h3>Compaction (${escape(entry.trigger)}${tokens})</h3><details><summary>Summary</summary>${pre(entry.summary)}</details></section>`;
    }
    case 'error':
      return `<section class="error"><h3>Error${entry.code === undefined ? '' : ` (${escape(entry.code)})`}</h3>${pre(entry.content)}</section>`;
    case 'child':
      return `<p class="child">Child session <code>${escape(entry.id)}</code>${entry.model === undefined ? '' : ` (${escape(entry.model)})`}</p>`;
    case 'run_end':
      return `<p class="run-end">Run ended: <strong>${escape(entry.status)}</strong>${entry.limit === undefined ? '' : ` (${escape(entry.limit)})`}</p>`;
  }
}

const STYLE = `
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1f2328;background:#fff}
table{border-collapse:collapse}td,th{border:1px solid #d0d7de;padding:.25rem .6rem;text-align:left;vertical-align:top}
pre{background:#f6f8fa;border:1px solid #d0d7de;border-radius:6px;padding:.6rem;overflow:auto;white-space:pre-wrap;word-break:break-word}
pre.text{background:none;border:none;padding:0;font:inherit}
details{border:1px solid #d0d7de;border-radius:6px;padding:.3rem .6rem;margin:.5rem 0}
summary{cursor:pointer;font-family:ui-monospace,monospace}
.tool-failed summary,.tool-blocked summary,.error h3{color:#cf222e}
.directive h3{color:#8250df}.approval,.run-end,.child,.note,.cut{color:#57606a}
h4{margin:.5rem 0 .2rem}
`;

/**
 * A session's transcript as one self-contained HTML page: inline CSS, no script, nothing loaded
 * from elsewhere (a Content-Security-Policy says so too), every text of the trace HTML-escaped,
 * each tool call a <details> element, long texts cut with a note.
 */
export function transcriptToHtml(transcript: Transcript): string {
  const { header } = transcript;
  const rows = headerRows(header);
  const body = [
    `<h1>Session ${escape(header.sessionId)}</h1>`,
    `<table class="header">${rows
      .map(([name, value]) => `<tr><th>${name}</th><td>${escape(value)}</td></tr>`)
      .join('')}</table>`,
  ];
  if (transcript.unreadableLines > 0)
    body.push(
      `<p class="note">${transcript.unreadableLines} lines of the trace could not be read and are not shown.</p>`,
    );
  const run = { count: 0 };
  for (const entry of transcript.entries) body.push(entryBlock(entry, run));
  const changes = transcript.changes;
  if (changes !== undefined && changes.stats.files > 0) {
    body.push(
      '<h2>Changes</h2>',
      `<p>${changes.stats.files} files changed, +${changes.stats.additions} −${changes.stats.deletions}</p>`,
      `<table class="changes"><tr><th>File</th><th>Status</th><th>+</th><th>−</th></tr>${changes.files
        .map(
          (file) =>
            `<tr><td>${escape(file.oldPath === undefined ? file.path : `${file.oldPath} → ${file.path}`)}</td><td>${escape(file.status)}${file.binary ? ' (binary)' : ''}</td><td>${file.additions}</td><td>${file.deletions}</td></tr>`,
        )
        .join('')}</table>`,
    );
  }
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>rho session ${escape(header.sessionId)}</title>`,
    `<style>${STYLE}</style></head><body>`,
    ...body,
    '</body></html>',
    '',
  ].join('\n');
}
