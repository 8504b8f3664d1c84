/** One part of a `multipart/form-data` body. */
export interface MultipartPart {
  /** The `name` of its Content-Disposition. */
  name: string;
  /** Its `filename`, when it has one. */
  filename: string | undefined;
  /** Its bytes. */
  data: Buffer;
}

/** Splits a whole `multipart/form-data` body into its parts. */
export function parseMultipart(body: Buffer, contentType: string): MultipartPart[] {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  const marker = boundary?.[1] ?? boundary?.[2];
  if (marker === undefined) throw new Error(`not a multipart body: ${contentType}`);
  const delimiter = Buffer.from(`--${marker}`);
  const parts: MultipartPart[] = [];
  let start = body.indexOf(delimiter);
  while (start !== -1) {
    const headerStart = start + delimiter.length;
    if (body.subarray(headerStart, headerStart + 2).toString() === '--') break;
    const headerEnd = body.indexOf('\r\n\r\n', headerStart);
    if (headerEnd === -1) break;
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), headerEnd + 4);
    if (next === -1) break;
    const headers = body.subarray(headerStart, headerEnd).toString('utf8');
    const name = /name="([^"]*)"/i.exec(headers)?.[1] ?? '';
    const filename = /filename="([^"]*)"/i.exec(headers)?.[1];
    parts.push({ name, filename, data: body.subarray(headerEnd + 4, next) });
    start = next + 2;
  }
  return parts;
}

/** Builds a `multipart/form-data` body; returns it with its Content-Type. */
export function buildMultipart(parts: { name: string; filename: string; contentType: string; data: Buffer }[]): {
  body: Buffer;
  contentType: string;
} {
  const boundary = `fake-daytona-${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${part.filename}"\r\n` +
          `Content-Type: ${part.contentType}\r\nContent-Length: ${part.data.length}\r\n\r\n`,
      ),
      part.data,
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}
