import { Lexer } from 'marked';
import type { Tokens } from 'marked';
import { describe, expect, it } from 'vitest';
import { renderTranscript } from './render-transcript.js';

// Records of kinds a scripted CLI run does not easily make: an approval asked and answered, a
// denied (blocked) call, a compaction, a child session's usage, a directive never delivered.
const records = [
  { type: 'run_start', ts: '2026-01-01T00:00:00.000Z', prompt: 'Delete the logs' },
  { type: 'message', role: 'user', content: 'Delete the logs', ts: '2026-01-01T00:00:00.001Z' },
  {
    type: 'message',
    role: 'assistant',
    content: '',
    tool_calls: [
      { id: 'c1', type: 'function', function: { name: 'bash', arguments: '{"command":"rm -rf logs"}' } },
      { id: 'c2', type: 'function', function: { name: 'delegate', arguments: '{"task":"count <b>files</b>"}' } },
    ],
  },
  { type: 'approval_requested', tool_call_id: 'c1', tool_name: 'bash', tool_args: {}, reason: 'rm is dangerous' },
  {
    type: 'approval_answered',
    tool_call_id: 'c1',
    tool_name: 'bash',
    decision: 'deny',
    scope: 'once',
    by: 'alice@host',
    source: 'operator',
    reason: 'keep them',
  },
  { type: 'tool_blocked', tool_call_id: 'c1', tool_name: 'bash', tool_args: {}, reason: 'denied by alice@host' },
  { type: 'message', role: 'tool', tool_call_id: 'c1', content: 'Refused: keep them' },
  {
    type: 'llm_end',
    model: 'm',
    input_tokens: 5,
    output_tokens: 1,
    cache_read_tokens: 0,
    reasoning_tokens: 0,
    cost_usd: 0.5,
    duration_ms: 1,
    purpose: 'child_session',
    child_session_id: 'kid00001',
  },
  {
    type: 'tool_end',
    tool_call_id: 'c2',
    tool_name: 'delegate',
    success: true,
    duration_ms: 3,
    metadata: { child_session_id: 'kid00001' },
  },
  { type: 'message', role: 'tool', tool_call_id: 'c2', content: '3 files' },
  {
    type: 'compact',
    trigger: 'auto',
    tokens_before: 9000,
    tokens_after: 800,
    summary: 'The user wants `logs` kept.',
    kept: [],
  },
  { type: 'directive', text: 'stop here' },
]
  .map((record) => JSON.stringify(record))
  .join('\n');

describe('renderTranscript', () => {
  it('shows approvals with who answered, blocked calls, child sessions, compactions and undelivered directives', () => {
    const markdown = renderTranscript(records, 'md', { sessionId: 's1' });
    expect(markdown).toContain('**Approval requested** for tool(bash): rm is dangerous');
    expect(markdown).toContain('**Denied** tool(bash) by alice@host (scope: once): keep them');
    expect(markdown).toContain('**Output** (blocked: denied by alice@host)');
    expect(markdown).toContain('Child session: `kid00001`');
    expect(markdown).toContain('**Child session** `kid00001` (m)');
    expect(markdown).toContain('### Compaction (auto, 9000 → 800 tokens)');
    expect(markdown).toContain('### Operator directive (not delivered)');
    expect(markdown).toContain('<summary>tool(delegate) count &#60;b&#62;files&#60;/b&#62;</summary>');
    const tokens = new Lexer().lex(markdown);
    expect(tokens.filter((token): token is Tokens.Code => token.type === 'code').map((code) => code.text)).toContain(
      'The user wants `logs` kept.',
    );

    const html = renderTranscript(records, 'html', { sessionId: 's1' });
    expect(html).toContain('<details class="tool tool-blocked"><summary>tool(bash) rm -rf logs</summary>');
    expect(html).toContain('<strong>Denied</strong> tool(bash) by alice@host (scope: once): keep them');
    expect(html).toContain('count &#60;b&#62;files&#60;/b&#62;');
    expect(html).not.toContain('<b>');
    expect(html).toContain('<tr><th>Cost</th><td>$0.5000</td></tr>');
  });
});
