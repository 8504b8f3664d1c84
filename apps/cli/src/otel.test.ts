import { describe, expect, it } from 'vitest';
import { otelSettings } from './otel.js';

const path = '/home/me/.config/rho/config.yaml';

describe('otelSettings', () => {
  it('is off unless --otel, RHO_OTEL_ENDPOINT or otel.endpoint asks for it (the standard variables alone do not)', () => {
    expect(otelSettings({}, {}, undefined, path)).toBeUndefined();
    expect(
      otelSettings({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', RHO_OTEL_ENDPOINT: ' ' }, {}, path),
    ).toBeUndefined();
    expect(otelSettings({ otel: '' }, {}, undefined, path)).toEqual({
      endpoint: 'http://localhost:4318',
      origin: 'default',
      headers: {},
      content: false,
    });
  });

  it('takes the endpoint from the flag, RHO_OTEL_ENDPOINT, otel.endpoint, then the standard variables', () => {
    const env = {
      RHO_OTEL_ENDPOINT: 'http://env:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:4318/v1/traces',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://base:4318',
    };
    const config = { endpoint: 'http://config:4318' };
    expect(otelSettings({ otel: 'http://flag:4318' }, env, config, path)).toMatchObject({
      endpoint: 'http://flag:4318',
      origin: '--otel',
    });
    expect(otelSettings({ otel: '' }, env, config, path)).toMatchObject({ endpoint: 'http://env:4318' });
    expect(otelSettings({}, { ...env, RHO_OTEL_ENDPOINT: undefined }, config, path)).toMatchObject({
      endpoint: 'http://config:4318',
      origin: `otel.endpoint (${path})`,
    });
    expect(otelSettings({ otel: '' }, { ...env, RHO_OTEL_ENDPOINT: undefined }, {}, path)).toMatchObject({
      endpoint: 'http://traces:4318/v1/traces',
      origin: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    });
    expect(otelSettings({ otel: '' }, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://base:4318' }, {}, path)).toMatchObject({
      endpoint: 'http://base:4318',
      origin: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    });
  });

  it('exports content only when asked: --otel-content, either variable, or otel.content', () => {
    const on = (flags: { otelContent?: boolean }, env: NodeJS.ProcessEnv, content?: boolean) =>
      otelSettings({ otel: '', ...flags }, env, content === undefined ? {} : { content }, path)!.content;
    expect(on({}, {})).toBe(false);
    expect(on({}, { RHO_OTEL_CAPTURE_CONTENT: 'false' })).toBe(false);
    expect(on({ otelContent: true }, {})).toBe(true);
    expect(on({}, { RHO_OTEL_CAPTURE_CONTENT: 'true' })).toBe(true);
    expect(on({}, { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'TRUE' })).toBe(true);
    expect(on({}, {}, true)).toBe(true);
  });
});
