import type { SecretRedactor } from '@rho/core';
import type { OtelSettings } from '@rho/otel/settings';
import { createSecretRedactor } from '@rho/core';
import { UsageError } from './exit-codes.js';

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
