import { MAX_TOOL_OUTPUT_BYTES } from '@rho/core/internal';
import { createSecretRedactor } from '@rho/core';
import { describe, expect, it } from 'vitest';
import { mapCallToolResult } from './mcp-result.js';

const where = { server: 's', tool: 't' };

describe('mapCallToolResult', () => {
  it('adds structured content as JSON unless the text already carries it', () => {
    expect(
      mapCallToolResult(
        { content: [{ type: 'text', text: 'It is sunny.' }], structuredContent: { temperature: 21 } },
        where,
      ).content,
    ).toBe('It is sunny.\n{\n  "temperature": 21\n}');
    expect(
      mapCallToolResult(
        { content: [{ type: 'text', text: '{"temperature":21}' }], structuredContent: { temperature: 21 } },
        where,
      ).content,
    ).toBe('{"temperature":21}');
    expect(
      mapCallToolResult(
        { content: [{ type: 'text', text: 'file body\n' }], structuredContent: { content: 'file body\n' } },
        where,
      ).content,
    ).toBe('file body\n');
  });

  it('maps isError, resources, audio and empty results', () => {
    expect(
      mapCallToolResult({ content: [{ type: 'text', text: 'no such file' }], isError: true }, where),
    ).toMatchObject({ success: false, content: 'no such file' });
    expect(mapCallToolResult({ content: [], isError: true }, where).content).toBe(
      '(the tool failed without saying why)',
    );
    expect(mapCallToolResult({ content: [] }, where).content).toBe('(the tool returned no content)');
    expect(
      mapCallToolResult({ content: [{ type: 'resource', resource: { uri: 'file:///a.txt', text: 'A' } }] }, where)
        .content,
    ).toBe('[resource file:///a.txt]\nA');
    expect(
      mapCallToolResult({ content: [{ type: 'resource_link', uri: 'file:///b', name: 'b' }] }, where).content,
    ).toBe('[resource link: file:///b (b)]');
    expect(
      mapCallToolResult({ content: [{ type: 'audio', data: 'AAAA', mimeType: 'audio/wav' }] }, where).content,
    ).toBe('[audio (audio/wav, 3 bytes) returned by the tool; audio is not passed to the model]');
  });

  it('truncates long output like every tool', () => {
    const long = 'x'.repeat(MAX_TOOL_OUTPUT_BYTES * 2);
    const mapped = mapCallToolResult({ content: [{ type: 'text', text: long }] }, where);
    expect(Buffer.byteLength(mapped.content)).toBeLessThan(long.length);
    expect(mapped.metadata).toEqual({ mcp: where });
  });
});

describe('mapCallToolResult with the session redactor', () => {
  it('redacts before it cuts: a secret across the cut leaves no piece behind', () => {
    const secret = 'mcp-secret-4Kq9Zx7Lw2';
    const text = `${'a'.repeat(MAX_TOOL_OUTPUT_BYTES / 2 - 8)}${secret}${'b'.repeat(MAX_TOOL_OUTPUT_BYTES)}`;
    const redactor = createSecretRedactor([{ name: 'TOKEN', value: secret }]);
    const plain = mapCallToolResult({ content: [{ type: 'text', text }] }, where).content;
    // Without the redactor the cut keeps the secret's first characters.
    expect(plain).toContain(secret.slice(0, 8));
    const redacted = mapCallToolResult({ content: [{ type: 'text', text }] }, { ...where, redactor }).content;
    for (const piece of [secret.slice(0, 6), secret.slice(2, 8), secret.slice(-6)])
      expect(redacted).not.toContain(piece);
  });
});
