/**
 * The OTLP/HTTP traces URL for an endpoint: a URL that already ends in `/v1/traces` is used as it
 * is; any other is a collector's base URL (`http://localhost:4318`), to which `/v1/traces` is
 * added, as `OTEL_EXPORTER_OTLP_ENDPOINT` is read by the OpenTelemetry SDKs.
 *
 * @throws TypeError saying what is wrong, for a value that is not an http(s) URL.
 */
export function otlpTracesUrl(endpoint: string): string {
  let url: URL;
  try {
    url = new URL(endpoint.trim());
  } catch {
    throw new TypeError(
      `'${endpoint}' is not a URL: give the collector's OTLP/HTTP endpoint, for example http://localhost:4318.`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new TypeError(
      `'${endpoint}' is not an http(s) URL: rho sends OTLP over HTTP, for example http://localhost:4318 (port 4318, not gRPC's 4317).`,
    );
  if (/\/v1\/traces\/?$/.test(url.pathname)) return url.toString();
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/traces`;
  return url.toString();
}

/**
 * Headers written as `OTEL_EXPORTER_OTLP_HEADERS` is: `key=value` pairs separated by commas,
 * values URL-encoded (`x-honeycomb-team=abc,x-honeycomb-dataset=rho`). Malformed pairs are skipped.
 */
export function parseOtlpHeaders(text: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    const index = pair.indexOf('=');
    if (index <= 0) continue;
    const key = pair.slice(0, index).trim();
    let value = pair.slice(index + 1).trim();
    try {
      value = decodeURIComponent(value);
    } catch {
      // Not URL-encoded after all: taken as written.
    }
    if (key !== '') headers[key] = value;
  }
  return headers;
}

/** What the standard OpenTelemetry environment variables say about the traces exporter. */
export interface OtlpEnvironment {
  /** From `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (as is), else `OTEL_EXPORTER_OTLP_ENDPOINT` (+ `/v1/traces`). */
  url?: string;
  /** `OTEL_EXPORTER_OTLP_HEADERS`, overridden key by key by `OTEL_EXPORTER_OTLP_TRACES_HEADERS`. */
  headers: Record<string, string>;
}

/**
 * Reads the standard OTLP exporter variables from `env`.
 *
 * @throws TypeError naming the variable, for an endpoint that is not an http(s) URL.
 */
export function otlpEnvironment(env: Record<string, string | undefined>): OtlpEnvironment {
  const traces = env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']?.trim();
  const base = env['OTEL_EXPORTER_OTLP_ENDPOINT']?.trim();
  let url: string | undefined;
  if (traces !== undefined && traces !== '')
    url = checked(traces, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', (value) => {
      // Used as it is (no /v1/traces added), once it is known to be an http(s) URL.
      otlpTracesUrl(value);
      return new URL(value).toString();
    });
  else if (base !== undefined && base !== '') url = checked(base, 'OTEL_EXPORTER_OTLP_ENDPOINT', otlpTracesUrl);
  return {
    ...(url === undefined ? {} : { url }),
    headers: {
      ...parseOtlpHeaders(env['OTEL_EXPORTER_OTLP_HEADERS']),
      ...parseOtlpHeaders(env['OTEL_EXPORTER_OTLP_TRACES_HEADERS']),
    },
  };
}

function checked(value: string, name: string, read: (value: string) => string): string {
  try {
    return read(value);
  } catch (error) {
    throw new TypeError(`${name}: ${(error as Error).message}`, { cause: error });
  }
}
