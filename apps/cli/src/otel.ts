import type { SecretRedactor } from '@rho/core';
import type { UserOtelConfig } from '@rho/core/internal';
import { createSecretRedactor } from '@rho/core';
import { UsageError } from './exit-codes.js';

/** Where and how to export spans, once `--otel`, `RHO_OTEL_ENDPOINT` or `otel.endpoint` turned export on. */
export interface OtelSettings {
  /** The endpoint as given (a collector's base URL or its traces URL), and where it came from. */
  endpoint: string;
  origin: string;
  /** Headers from the standard variables and `otel.headers` (which win). */
  headers: Record<string, string>;
  /** Whether message content is exported. */
  content: boolean;
}

/** The collector the OpenTelemetry docs and Jaeger, Tempo and the Collector listen on for OTLP/HTTP. */
const DEFAULT_ENDPOINT = 'http://localhost:4318';

/**
 * Whether spans are exported, and where: `--otel [ENDPOINT]`, `RHO_OTEL_ENDPOINT` or `otel.endpoint`
 * of `$RHO_HOME/config.yaml` turn export on (off by default). The endpoint is, by precedence, the
 * flag's value, `RHO_OTEL_ENDPOINT`, `otel.endpoint`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`,
 * `OTEL_EXPORTER_OTLP_ENDPOINT`, else http://localhost:4318. Content is exported with
 * `--otel-content`, `RHO_OTEL_CAPTURE_CONTENT=true`,
 * `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` or `otel.content: true`. Loads nothing.
 */
export function otelSettings(
  flags: { otel?: string | undefined; otelContent?: boolean | undefined },
  env: NodeJS.ProcessEnv,
  config: UserOtelConfig | undefined,
  configPath: string,
): OtelSettings | undefined {
  const fromEnv = nonEmpty(env.RHO_OTEL_ENDPOINT);
  const fromConfig = nonEmpty(config?.endpoint);
  if (flags.otel === undefined && fromEnv === undefined && fromConfig === undefined) return undefined;
  const candidates: [string | undefined, string][] = [
    [nonEmpty(flags.otel), '--otel'],
    [fromEnv, 'RHO_OTEL_ENDPOINT'],
    [fromConfig, `otel.endpoint (${configPath})`],
    [nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'],
    [nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT), 'OTEL_EXPORTER_OTLP_ENDPOINT'],
  ];
  const [endpoint, origin] = candidates.find(([value]) => value !== undefined) ?? [DEFAULT_ENDPOINT, 'default'];
  return {
    endpoint: endpoint!,
    origin,
    headers: config?.headers ?? {},
    content:
      flags.otelContent === true ||
      truthy(env.RHO_OTEL_CAPTURE_CONTENT) ||
      truthy(env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT) ||
      config?.content === true,
  };
}

/** The exporter of `settings`: `@rho/otel` and the OpenTelemetry SDK are imported only here. */
export async function startOtel(
  settings: OtelSettings,
  env: NodeJS.ProcessEnv,
  options: { version?: string; onWarning?: (message: string) => void; redactor?: SecretRedactor },
): Promise<import('@rho/otel').OtlpTracing> {
  const otel = await import('@rho/otel');
  let url: string;
  let environment: import('@rho/otel').OtlpEnvironment;
  try {
    environment = otel.otlpEnvironment(env);
    // The traces endpoint variable is a whole URL; every other source is a collector's base URL.
    url =
      settings.origin === 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' && environment.url !== undefined
        ? environment.url
        : otel.otlpTracesUrl(settings.endpoint);
  } catch (error) {
    throw new UsageError({
      message: `OpenTelemetry endpoint from ${settings.origin}: ${error instanceof Error ? error.message : String(error)}`,
    });
  }
  let warned = false;
  // A collector URL may carry credentials (https://user:token@...): never printed.
  const shown = (options.redactor ?? createSecretRedactor()).text(url);
  return otel.createOtlpTracing({
    url,
    headers: { ...environment.headers, ...settings.headers },
    serviceName: 'rho',
    ...(options.redactor === undefined ? {} : { redactor: options.redactor }),
    ...(options.version === undefined ? {} : { serviceVersion: options.version }),
    // A collector that does not answer holds the exit up by this much at most.
    timeoutMs: 3000,
    onExportError: (error) => {
      // Once per process: a collector that is down fails every batch the same way.
      if (warned) return;
      warned = true;
      options.onWarning?.(
        `OpenTelemetry export to ${shown} failed (${error.message}); the run goes on, its spans are not exported.`,
      );
    },
  });
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function truthy(value: string | undefined): boolean {
  return value !== undefined && ['1', 'true', 'yes', 'on'].includes(value.trim().toLowerCase());
}
