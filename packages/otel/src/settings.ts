/**
 * `@rho/otel/settings`: OpenTelemetry export's settings section. Light: it loads no SDK (the CLI
 * imports `@rho/otel` only once export is on).
 */
import { defineSettingsSection, flagOrSwitch, mappingOfText, text } from '@rho/core/settings';

/** Where and how to export spans, once export is on. */
export interface OtelSettings {
  /** The endpoint as given (a collector's base URL or its traces URL). */
  readonly endpoint: string;
  /** Where it came from: `--otel`, `RHO_OTEL_ENDPOINT`, `otel.endpoint (FILE:LINE)`, a standard variable, `default`. */
  readonly origin: string;
  /** `otel.headers` (they win over the standard variables' headers). */
  readonly headers: Readonly<Record<string, string>>;
  /** Whether message content is exported. */
  readonly content: boolean;
}

/** The collector the OpenTelemetry docs and Jaeger, Tempo and the Collector listen on for OTLP/HTTP. */
const DEFAULT_ENDPOINT = 'http://localhost:4318';

/**
 * OpenTelemetry export, off unless `--otel [ENDPOINT]`, `RHO_OTEL_ENDPOINT` or `otel.endpoint` of
 * `$RHO_HOME/config.yaml` turns it on. The endpoint is the first of the flag's value,
 * `RHO_OTEL_ENDPOINT`, `otel.endpoint`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`,
 * `OTEL_EXPORTER_OTLP_ENDPOINT`, else http://localhost:4318.
 */
export const otelSettingsSection = defineSettingsSection({
  name: 'otel',
  owner: '@rho/otel',
  description:
    'OpenTelemetry export of spans (GenAI conventions) over OTLP/HTTP: off unless --otel, RHO_OTEL_ENDPOINT or otel.endpoint turns it on; the standard OTEL_EXPORTER_OTLP_* variables count only once it is on.',
  mappings: [{ key: 'otel', unknownKeys: 'warn' }],
  settings: [
    {
      key: 'otel.endpoint',
      description:
        "The collector's OTLP/HTTP endpoint; setting it turns export on (--otel alone: the next source's, else the default)",
      files: ['home'],
      ...text('a URL such as http://localhost:4318'),
      env: ['RHO_OTEL_ENDPOINT'],
      fallbackEnv: ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_ENDPOINT'],
      flag: 'otel',
      why: 'the standard variables other tools also read count below the file, and only once export is on (a shell that exports them for other tools does not turn rho’s on)',
    },
    {
      key: 'otel.headers',
      description: 'Headers of every export request (API keys); they win over OTEL_EXPORTER_OTLP_HEADERS',
      files: ['home'],
      ...mappingOfText('a mapping of header names to strings'),
      secret: true,
    },
    {
      key: 'otel.content',
      description: 'Export message content too (prompts, answers, tool arguments and results)',
      files: ['home'],
      ...flagOrSwitch(),
      env: ['RHO_OTEL_CAPTURE_CONTENT', 'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT'],
      flag: 'otel-content',
      default: false,
    },
  ],
  build(context): OtelSettings | undefined {
    const layers = context.layers('otel.endpoint');
    const on = layers.some(
      (layer) =>
        layer.kind === 'flag' || layer.kind === 'home' || (layer.kind === 'env' && layer.name === 'RHO_OTEL_ENDPOINT'),
    );
    if (!on) return undefined;
    const found = [...layers].reverse().find((layer) => String(layer.value).trim() !== '');
    const origin =
      found === undefined
        ? 'default'
        : found.kind === 'flag'
          ? '--otel'
          : found.kind === 'env'
            ? found.name
            : `otel.endpoint (${found.origin})`;
    return {
      endpoint: found === undefined ? DEFAULT_ENDPOINT : String(found.value).trim(),
      origin,
      headers: (context.value<Record<string, string>>('otel.headers') ?? {}) as Record<string, string>,
      content: context.value<boolean>('otel.content') === true,
    };
  },
});
