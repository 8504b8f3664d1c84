import { createServer } from 'node:http';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/** A span as an OTLP/HTTP JSON export carried it, decoded. */
export interface ReceivedSpan {
  /** Hex trace id. */
  traceId: string;
  /** Hex span id. */
  spanId: string;
  /** Hex id of the parent span, `undefined` for a root span. */
  parentSpanId: string | undefined;
  /** The span name, for example `chat gpt-5-mini`. */
  name: string;
  /** OTLP span kind: 1 internal, 2 server, 3 client. */
  kind: number;
  /** Start and end, in milliseconds since the epoch (fractions kept). */
  startMs: number;
  endMs: number;
  /** Attributes with their values decoded (arrays as arrays, integers as numbers). */
  attributes: Record<string, unknown>;
  /** OTLP status code (0 unset, 1 ok, 2 error) and message. */
  status: { code: number; message?: string };
  /** Attributes of the resource that sent the span (`service.name`, ...). */
  resource: Record<string, unknown>;
}

/** A running in-process OTLP/HTTP receiver, from {@link startOtlpReceiver}. */
export interface OtlpReceiver {
  /** The collector's base URL (`http://127.0.0.1:PORT`); exports go to `<url>/v1/traces`. */
  readonly url: string;
  /** Every span received so far, in arrival order. */
  readonly spans: ReceivedSpan[];
  /** The raw bodies received (JSON text), for checks of what was sent at all. */
  readonly bodies: string[];
  /** The headers of each export request, in order (lower-case names). */
  readonly requestHeaders: Record<string, string | string[] | undefined>[];
  /** Stops listening and drops open connections. */
  close(): Promise<void>;
}

/** Options of {@link startOtlpReceiver}. */
export interface OtlpReceiverOptions {
  /** Accept requests and never answer, as a collector that hangs does. */
  hang?: boolean;
}

/**
 * Starts an OTLP/HTTP collector on 127.0.0.1 (random port) that accepts JSON trace exports
 * (`POST /v1/traces`, `application/json`), as the OpenTelemetry JS exporter sends them by
 * default, and decodes their spans, so tests can check what a program exports without a real
 * collector.
 */
export async function startOtlpReceiver(options: OtlpReceiverOptions = {}): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const requestHeaders: Record<string, string | string[] | undefined>[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (options.hang === true) return;
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        const decoded = decodeTraces(JSON.parse(text));
        bodies.push(text);
        requestHeaders.push(request.headers);
        spans.push(...decoded);
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } catch (error) {
        response.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ message: String(error) }));
      }
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    bodies,
    requestHeaders,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

interface JsonKeyValue {
  key: string;
  value: JsonAnyValue;
}
interface JsonAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | string | { low: number; high: number };
  doubleValue?: number;
  arrayValue?: { values?: JsonAnyValue[] };
  kvlistValue?: { values?: JsonKeyValue[] };
}
interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: unknown;
  endTimeUnixNano: unknown;
  attributes?: JsonKeyValue[];
  status?: { code?: number; message?: string };
}
interface JsonTraces {
  resourceSpans?: { resource?: { attributes?: JsonKeyValue[] }; scopeSpans?: { spans?: JsonSpan[] }[] }[];
}

function decodeTraces(document: JsonTraces): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of document.resourceSpans ?? []) {
    const resource = attributesOf(resourceSpans.resource?.attributes);
    for (const scope of resourceSpans.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        spans.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId === undefined || span.parentSpanId === '' ? undefined : span.parentSpanId,
          name: span.name,
          kind: span.kind,
          startMs: nanosToMs(span.startTimeUnixNano),
          endMs: nanosToMs(span.endTimeUnixNano),
          attributes: attributesOf(span.attributes),
          status: { code: span.status?.code ?? 0, ...(span.status?.message ? { message: span.status.message } : {}) },
          resource,
        });
      }
    }
  }
  return spans;
}

function attributesOf(list: JsonKeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, valueOf(value)]));
}

function valueOf(value: JsonAnyValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.intValue !== undefined) return integerOf(value.intValue);
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(valueOf);
  if (value.kvlistValue !== undefined) return attributesOf(value.kvlistValue.values);
  return undefined;
}

function integerOf(value: number | string | { low: number; high: number }): number {
  if (typeof value === 'object') return value.high * 2 ** 32 + (value.low >>> 0);
  return Number(value);
}

function nanosToMs(value: unknown): number {
  if (typeof value === 'object' && value !== null && 'low' in value && 'high' in value) {
    const { low, high } = value as { low: number; high: number };
    return Number((BigInt(high >>> 0) << 32n) + BigInt(low >>> 0)) / 1e6;
  }
  return Number(BigInt(String(value))) / 1e6;
}
