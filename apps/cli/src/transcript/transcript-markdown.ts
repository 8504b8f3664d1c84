import type { Transcript, TranscriptEntry, TranscriptToolCall } from './transcript.js';
import { argsShort, argsText, bounded, headerRows, fenceFor, statusText } from './transcript-text.js';

/** Text for a Markdown paragraph or table cell: on one line, every punctuation mark escaped. */
function inline(value: string): string {
  return value.replace(/\s+/g, ' ').replace(/[\\`*_[\]<>|~&]/g, (mark) => `\\${mark}`);
}

/** Text inside an HTML tag of the Markdown (a <summary>): HTML-escaped. */
function html(value: string): string {
  return value.replace(/[&<>"']/g, (mark) => `&#${mark.charCodeAt(0)};`);
}

/** A fenced code block whose fence no backtick run inside can close, cut when too long. */
function codeBlock(content: string, language = ''): string {
  const { text, cut } = bounded(content);
  const fence = fenceFor(text);
  const block = `${fence}${language}\n${text}${text.endsWith('\n') || text === '' ? '' : '\n'}${fence}`;
  return cut === undefined ? block : `${block}\n\n*${inline(cut)}*`;
}

/** A folded block: GitHub renders <details> and the Markdown inside it (after a blank line). */
function details(summary: string, body: string[]): string {
  return [`<details>\n<summary>${html(summary)}</summary>`, ...body, '</details>'].join('\n\n');
}

function toolBlock(call: TranscriptToolCall): string {
  const body = ['**Arguments**', codeBlock(argsText(call.args), typeof call.args === 'string' ? 'text' : 'json')];
  if (call.childSessionId !== undefined) body.push(`Child session: \`${call.childSessionId}\``);
  body.push(`**Output** (${inline(statusText(call.status, call.reason))})`);
  body.push(call.output === undefined ? '*No output recorded.*' : codeBlock(call.output, 'text'));
  if (call.outputDetails !== undefined) body.push(codeBlock(call.outputDetails, 'json'));
  return details(`tool(${call.name}) ${argsShort(call.args)}`.trim(), body);
}

function entryBlock(entry: TranscriptEntry, run: { count: number }): string {
  switch (entry.kind) {
    case 'run':
      run.count += 1;
      return `## Run ${run.count}${entry.ts === undefined ? '' : ` \u00b7 ${inline(entry.ts)}`}`;
    case 'user':
      return `### User\n\n${entry.text}`;
    case 'system':
      return details('System message', [codeBlock(entry.text, 'text')]);
    case 'assistant': {
      const parts = ['### Assistant'];
      if (entry.reasoning !== undefined) parts.push(details('Reasoning', [codeBlock(entry.reasoning, 'text')]));
      if (entry.text !== '') parts.push(entry.text);
      return parts.join('\n\n');
    }
    case 'tool':
      return toolBlock(entry);
    case 'directive':
      return `### Operator directive${entry.delivered ? '' : ' (not delivered)'}\n\n${codeBlock(entry.text, 'text')}`;
    case 'approval_requested':
      return `**Approval requested** for tool(${inline(entry.tool)})${entry.reason === undefined ? '' : `: ${inline(entry.reason)}`}`;
    case 'approval': {
      const verb =
        entry.decision === 'approve' ? 'Approved' : entry.decision === 'deny' ? 'Denied' : inline(entry.decision);
      const who = entry.by ?? entry.source;
      return [
        `**${verb}** tool(${inline(entry.tool)})`,
        who === undefined ? '' : ` by ${inline(who)}`,
        entry.scope === undefined ? '' : ` (scope: ${inline(entry.scope)})`,
        entry.reason === undefined ? '' : `: ${inline(entry.reason)}`,
      ].join('');
    }
    case 'compaction': {
      const tokens =
        entry.tokensBefore === undefined ? '' : `, ${entry.tokensBefore} → ${entry.tokensAfter ?? '?'} tokens`;
      return `### Compaction (${inline(entry.trigger)}${tokens})\n\n${details('Summary', [codeBlock(entry.summary, 'text')])}`;
    }
    case 'error':
      return `### Error${entry.code === undefined ? '' : ` (${inline(entry.code)})`}\n\n${codeBlock(entry.content, 'text')}`;
    case 'child':
      return `**Child session** \`${entry.id}\`${entry.model === undefined ? '' : ` (${inline(entry.model)})`}`;
    case 'run_end':
      return `**Run ended: ${inline(entry.status)}**${entry.limit === undefined ? '' : ` (${inline(entry.limit)})`}`;
  }
}

/**
 * A session's transcript as GitHub-flavoured Markdown, for a bug report or a pull request: a
 * header table, the conversation (user and assistant text kept as Markdown, each tool call folded
 * in a <details> block with its arguments and output in fenced code blocks no backtick run inside
 * can close), and the final diff's stats.
 */
export function transcriptToMarkdown(transcript: Transcript): string {
  const { header } = transcript;
  const rows = headerRows(header);
  const blocks = [
    `# Session ${inline(header.sessionId)}`,
    ['| Field | Value |', '| --- | --- |', ...rows.map(([name, value]) => `| ${name} | ${inline(value)} |`)].join('\n'),
  ];
  if (transcript.unreadableLines > 0)
    blocks.push(`*${transcript.unreadableLines} lines of the trace could not be read and are not shown.*`);
  const run = { count: 0 };
  for (const entry of transcript.entries) blocks.push(entryBlock(entry, run));
  const changes = transcript.changes;
  if (changes !== undefined && changes.stats.files > 0) {
    blocks.push('## Changes');
    blocks.push(`${changes.stats.files} files changed, +${changes.stats.additions} −${changes.stats.deletions}`);
    blocks.push(
      [
        '| File | Status | + | − |',
        '| --- | --- | --- | --- |',
        ...changes.files.map(
          (file) =>
            `| ${inline(file.oldPath === undefined ? file.path : `${file.oldPath} → ${file.path}`)} | ${file.status}${file.binary ? ' (binary)' : ''} | ${file.additions} | ${file.deletions} |`,
        ),
      ].join('\n'),
    );
  }
  return `${blocks.join('\n\n')}\n`;
}
