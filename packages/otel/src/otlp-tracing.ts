import type { Tracer } from '@opentelemetry/api';
import type { ExportResult } from '@opentelemetry/core';
import { ExportResultCode } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { SecretRedactor, SessionObserver } from '@rho/core';
import { createSecretRedactor } from '@rho/core';
import type { SessionSpanOptions } from './session-span-observer.js';
import { createSessionSpanObserver } from './session-span-observer.js';

/** Options of {@link createOtlpTracing}. */
export interface OtlpTracingOptions {
  /** The OTLP/HTTP traces URL, for example `http://localhost:4318/v1/traces` (see `otlpTracesUrl`). */
  url: string;
  /** HTTP headers of every export request (an API key, for example `x-honeycomb-team`). */
  headers?: Record<string, string>;
  /** `service.name` of the resource. Default `rho`. */
  serviceName?: string;
  /** `service.version` of the resource. */
  serviceVersion?: string;
  /**
   * The longest one export request, and `shutdown()` as a whole, may take, in milliseconds, so a
   * collector that does not answer never holds the application up. Default 5000.
   */
  timeoutMs?: number;
  /**
   * Told when an export fails (the collector is down, refuses the request, ...). Spans of that
   * batch are dropped; the application goes on. Default: failures are ignored.
   */
  onExportError?: (error: Error) => void;
  /**
   * The secrets to keep out of the spans (core's `createSecretRedactor`, given rho's API keys,
   * database passwords and the like): every string attribute, status message and event of every
   * span goes through it before export, content or not. Whatever is given, the password of any
   * URL written in them is removed too.
   */
  redactor?: SecretRedactor;
}

/** An OTLP/HTTP exporter of sessions' spans, from {@link createOtlpTracing}. */
export interface OtlpTracing {
  /** The tracer of its provider, for your own spans or `createSessionSpanObserver`. */
  readonly tracer: Tracer;
  /**
   * Attaches a span observer to `session` (and, through it, to its child sessions). Returns a
   * function that detaches it.
   */
  instrument(
    session: Parameters<typeof createSessionSpanObserver>[0] & { observe(observer: SessionObserver): () => void },
    options?: Omit<SessionSpanOptions, 'tracer'>,
  ): () => void;
  /** Exports the spans ended so far; resolves within `timeoutMs`, never rejects. */
  flush(): Promise<void>;
  /** Exports what is left and stops; resolves within `timeoutMs`, never rejects. Idempotent. */
  shutdown(): Promise<void>;
}

/**
 * An OpenTelemetry tracer provider of its own (not registered globally, so it never interferes
 * with the application's) that batches spans and sends them as OTLP/HTTP JSON to `url`, with
 * bounded timeouts and export failures reported to `onExportError`, never thrown.
 */
export function createOtlpTracing(options: OtlpTracingOptions): OtlpTracing {
  const timeoutMs = options.timeoutMs ?? 5000;
  const exporter = new ReportingExporter(
    new OTLPTraceExporter({
      url: options.url,
      headers: options.headers ?? {},
      timeoutMillis: timeoutMs,
    }),
    options.onExportError,
    options.redactor ?? createSecretRedactor(),
  );
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: options.serviceName ?? 'rho',
      ...(options.serviceVersion === undefined ? {} : { [ATTR_SERVICE_VERSION]: options.serviceVersion }),
    }),
    spanProcessors: [new BatchSpanProcessor({ exporter, exportTimeoutMillis: timeoutMs })],
  });
  const tracer = provider.getTracer('@rho/otel');
  let stopped: Promise<void> | undefined;
  return {
    tracer,
    instrument: (session, spanOptions = {}) =>
      session.observe(createSessionSpanObserver(session, { ...spanOptions, tracer })),
    flush: () => bounded(provider.forceFlush(), timeoutMs),
    shutdown: () => (stopped ??= bounded(provider.shutdown(), timeoutMs)),
  };
}

/** Resolves when `work` settles or after `timeoutMs`, whichever comes first; never rejects. */
function bounded(work: Promise<unknown>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
    timer.unref();
  });
  return Promise.race([
    work.then(
      () => undefined,
      () => undefined,
    ),
    timeout,
  ]).finally(() => clearTimeout(timer));
}

/** Passes spans on to `inner` and reports the batches it could not export. */
class ReportingExporter implements SpanExporter {
  constructor(
    private readonly inner: SpanExporter,
    private readonly onError: ((error: Error) => void) | undefined,
    private readonly redact: SecretRedactor,
  ) {}

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    this.inner.export(
      spans.map((span) => redactSpan(span, this.redact)),
      (result) => {
        if (result.code !== ExportResultCode.SUCCESS) {
          try {
            this.onError?.(result.error ?? new Error('the OTLP export failed'));
          } catch {
            // A failing error handler must not break the export pipeline.
          }
        }
        resultCallback(result);
      },
    );
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/**
 * The span as exported, with every string of its attributes, status message and events through
 * `redact`: one place for every attribute the observer sets (content, error messages, names of
 * tools and models), so no new attribute can carry a secret past it.
 */
function redactSpan(span: ReadableSpan, redact: SecretRedactor): ReadableSpan {
  return {
    name: redact.text(span.name),
    kind: span.kind,
    spanContext: () => span.spanContext(),
    parentSpanContext: span.parentSpanContext,
    startTime: span.startTime,
    endTime: span.endTime,
    status:
      span.status.message === undefined ? span.status : { ...span.status, message: redact.text(span.status.message) },
    attributes: redact(span.attributes),
    links: span.links,
    events: span.events.map((event) =>
      event.attributes === undefined ? event : { ...event, attributes: redact(event.attributes) },
    ),
    duration: span.duration,
    ended: span.ended,
    resource: span.resource,
    instrumentationScope: span.instrumentationScope,
    droppedAttributesCount: span.droppedAttributesCount,
    droppedEventsCount: span.droppedEventsCount,
    droppedLinksCount: span.droppedLinksCount,
  };
}
