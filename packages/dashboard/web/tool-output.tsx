// A tool call's output, rendered for its kind: a command's output with its exit code, a file's
// lines with their numbers, an edit or a write as a coloured diff, a SQL result as a table, an
// image as an image; anything else as its text (JSON pretty-printed).
import type { ComponentChildren } from 'preact';
import { contentText } from './format.js';

/** What the detail pane knows of a finished call. */
export interface ToolOutputInput {
  name: string;
  args: unknown;
  /** The tool message's content (a string, or OpenAI content parts). */
  content: unknown;
  /** The `tool_end` record's metadata. */
  metadata?: Record<string, unknown>;
  success: boolean;
}

const READ_LINE = /^( *\d+) {2}(.*)$/;
const READ_FOOTER = /^\[Showing lines (\d+)-(\d+) of (\d+)\]$/;
const OMITTED = /\[\.\.\. (\d+) bytes of output omitted \.\.\.\]/;

function object(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function parsed(text: string): unknown {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return undefined;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    return undefined;
  }
}

/** The kind the output is rendered as (`data-kind` of the rendered element, for tests and styles). */
export type OutputKind = 'command' | 'file' | 'diff' | 'table' | 'image' | 'json' | 'text' | 'error';

/** The output of one call. */
export function ToolOutput({ input }: { input: ToolOutputInput }) {
  const { name, content } = input;
  const metadata = input.metadata ?? {};
  const images = imageParts(content);
  const text = contentText(content);
  const json = object(parsed(text));
  if (json !== undefined && typeof json['output'] === 'string' && object(json['metadata']) !== undefined)
    return <CommandOutput output={json['output']} metadata={{ ...object(json['metadata']), ...metadata }} />;
  if (!input.success) return <Output kind="error">{text === '' ? 'failed' : text}</Output>;
  if (images.length > 0)
    return (
      <div class="output" data-kind="image">
        {images.map((source, index) => (
          <img key={index} src={source} alt={`image ${index + 1} of ${name}`} />
        ))}
        {text !== '' && <pre>{text}</pre>}
      </div>
    );
  const args = object(input.args) ?? {};
  if (name === 'edit' && typeof args['old_string'] === 'string' && typeof args['new_string'] === 'string')
    return (
      <>
        <Diff removed={args['old_string']} added={args['new_string']} path={String(args['path'] ?? '')} />
        <p class="output-note">{text}</p>
      </>
    );
  if (name === 'write' && typeof args['content'] === 'string')
    return (
      <>
        <Diff removed="" added={args['content']} path={String(args['path'] ?? '')} />
        <p class="output-note">{text}</p>
      </>
    );
  const columns = metadata['columns'];
  if (Array.isArray(columns) && columns.every((column) => typeof column === 'string')) {
    const table = alignedRows(text, columns.length);
    if (table !== undefined)
      return (
        <SqlTable
          columns={table.header}
          rows={table.rows}
          more={table.more}
          note={
            metadata['truncated'] === true && typeof metadata['total_rows'] === 'number'
              ? `${String(metadata['row_count'])} of ${metadata['total_rows']} rows returned`
              : undefined
          }
        />
      );
  }
  if (name === 'read') {
    const file = numberedLines(text);
    if (file !== undefined) return <FileLines lines={file.lines} footer={file.footer} />;
  }
  if (json !== undefined || Array.isArray(parsed(text)))
    return <Output kind="json">{JSON.stringify(parsed(text), null, 2)}</Output>;
  return <Output kind="text">{text === '' ? '(no output)' : text}</Output>;
}

function Output({ kind, children }: { kind: OutputKind; children: ComponentChildren }) {
  return (
    <pre class={`output output-${kind}`} data-kind={kind}>
      {children}
    </pre>
  );
}

function CommandOutput({ output, metadata }: { output: string; metadata: Record<string, unknown> }) {
  const exit = typeof metadata['exit_code'] === 'number' ? metadata['exit_code'] : undefined;
  const notes: string[] = [];
  const omitted = OMITTED.exec(output);
  if (omitted !== null) notes.push(`output truncated: ${omitted[1]} bytes omitted from the middle`);
  if (metadata['timed_out'] === true) notes.push('timed out');
  if (metadata['cancelled'] === true) notes.push('cancelled');
  if (Array.isArray(metadata['limits_reached'])) notes.push(`limits reached: ${metadata['limits_reached'].join(', ')}`);
  return (
    <div class="output" data-kind="command">
      <p class={`exit ${exit === 0 ? 'exit-ok' : 'exit-failed'}`} data-testid="exit-code">
        {exit === undefined ? 'no exit code' : `exit ${exit}`}
        {typeof metadata['duration_ms'] === 'number' ? ` · ${Math.round(metadata['duration_ms'])} ms` : ''}
      </p>
      <pre class="output-command">{output.trim() === '' ? '(no output)' : output}</pre>
      {notes.map((note) => (
        <p class="output-note" key={note}>
          {note}
        </p>
      ))}
    </div>
  );
}

function Diff({ removed, added, path }: { removed: string; added: string; path: string }) {
  const lines = (text: string) => (text === '' ? [] : text.replace(/\n$/, '').split('\n'));
  return (
    <div class="output" data-kind="diff">
      {path !== '' && <p class="diff-path mono">{path}</p>}
      <pre class="diff">
        {lines(removed).map((line, index) => (
          <span class="diff-del" key={`d${index}`}>
            {`-${line}\n`}
          </span>
        ))}
        {lines(added).map((line, index) => (
          <span class="diff-add" key={`a${index}`}>
            {`+${line}\n`}
          </span>
        ))}
      </pre>
    </div>
  );
}

function SqlTable({
  columns,
  rows,
  more,
  note,
}: {
  columns: string[];
  rows: string[][];
  more?: string;
  note?: string | undefined;
}) {
  return (
    <div class="output table-wrap" data-kind="table">
      <table class="sql">
        <thead>
          <tr>
            {columns.map((column, index) => (
              <th key={index}>{column}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, index) => (
            <tr key={index}>
              {row.map((cell, cellIndex) => (
                <td key={cellIndex} class={cell === 'NULL' ? 'null' : ''}>
                  {cell}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      {more !== undefined && <p class="output-note">{more}</p>}
      {note !== undefined && <p class="output-note">{note}</p>}
    </div>
  );
}

function FileLines({ lines, footer }: { lines: [string, string][]; footer?: string | undefined }) {
  return (
    <div class="output" data-kind="file">
      <pre class="file">
        {lines.map(([number, line], index) => (
          <span class="file-line" key={index}>
            <span class="line-number">{number}</span>
            {`${line}\n`}
          </span>
        ))}
      </pre>
      {footer !== undefined && <p class="output-note">{footer}</p>}
    </div>
  );
}

/**
 * The rows of a table as rho's database tools align it (`a | b`, dashes joined by `-+-`, rows, and
 * `... (N more rows)`): cells are cut at the widths the dashes give, so a ` | ` inside a value
 * stays in it. Undefined when the text is not such a table.
 */
export function alignedRows(
  text: string,
  count: number,
): { header: string[]; rows: string[][]; more?: string } | undefined {
  const lines = text.split('\n');
  const rule = lines[1];
  if (rule === undefined || !/^-+(-\+-+)*$/.test(rule)) return undefined;
  const widths = rule.split('-+-').map((dashes) => dashes.length);
  if (widths.length !== count) return undefined;
  const cut = (line: string) => {
    const cells: string[] = [];
    let at = 0;
    for (let index = 0; index < widths.length; index += 1) {
      const last = index === widths.length - 1;
      cells.push((last ? line.slice(at) : line.slice(at, at + widths[index]!)).trim());
      at += widths[index]! + 3;
    }
    return cells;
  };
  const body = lines.slice(2);
  const tail = body.at(-1) ?? '';
  const more = /^\.\.\. \(\d+ more rows?\)$/.test(tail) ? body.pop() : undefined;
  return {
    header: cut(lines[0]!),
    rows: body.filter((line) => line !== '').map(cut),
    ...(more === undefined ? {} : { more }),
  };
}

function numberedLines(text: string): { lines: [string, string][]; footer?: string } | undefined {
  const all = text.replace(/\s+$/, '').split('\n');
  const footerMatch = READ_FOOTER.exec(all.at(-1) ?? '');
  if (footerMatch !== null) all.splice(all.length - (all.at(-2) === '' ? 2 : 1));
  const lines: [string, string][] = [];
  for (const line of all) {
    const match = READ_LINE.exec(line);
    if (match === null) return undefined;
    lines.push([match[1]!.trim(), match[2]!]);
  }
  return {
    lines,
    ...(footerMatch === null ? {} : { footer: `lines ${footerMatch[1]}-${footerMatch[2]} of ${footerMatch[3]}` }),
  };
}

/** The `data:image/...` URLs among OpenAI content parts (nothing is fetched from elsewhere). */
function imageParts(content: unknown): string[] {
  if (!Array.isArray(content)) return [];
  return content.flatMap((part) => {
    const url = object(object(part)?.['image_url'])?.['url'];
    return typeof url === 'string' && /^data:image\/(png|jpeg|gif|webp);base64,/.test(url) ? [url] : [];
  });
}
