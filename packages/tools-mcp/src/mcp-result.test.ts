import { MAX_TOOL_OUTPUT_BYTES } from '@rho/core/internal';
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
