import { describe, expect, it } from 'vitest';
import { providerOf, serverOf } from './internal/provider.js';
import { otlpEnvironment, otlpTracesUrl, parseOtlpHeaders } from './otlp-settings.js';

describe('otlpTracesUrl', () => {
  it('adds /v1/traces to a base URL and keeps a traces URL as it is', () => {
    expect(otlpTracesUrl('http://localhost:4318')).toBe('http://localhost:4318/v1/traces');
    expect(otlpTracesUrl('http://localhost:4318/')).toBe('http://localhost:4318/v1/traces');
    expect(otlpTracesUrl('https://otlp.example.com/prefix')).toBe('https://otlp.example.com/prefix/v1/traces');
    expect(otlpTracesUrl('https://api.honeycomb.io/v1/traces')).toBe('https://api.honeycomb.io/v1/traces');
  });

  it('says what is wrong with a value that is not an http(s) URL', () => {
    expect(() => otlpTracesUrl('localhost:4318')).toThrow(/http\(s\) URL/);
    expect(() => otlpTracesUrl('not a url')).toThrow(/is not a URL/);
  });
});

describe('the standard OTLP environment variables', () => {
  it('prefers the traces endpoint (as is) over the base endpoint (+ /v1/traces)', () => {
    expect(otlpEnvironment({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).url).toBe(
      'http://collector:4318/v1/traces',
    );
    expect(
      otlpEnvironment({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:9999/custom',
      }).url,
    ).toBe('http://traces:9999/custom');
    expect(otlpEnvironment({}).url).toBeUndefined();
    expect(() => otlpEnvironment({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(
      /^OTEL_EXPORTER_OTLP_ENDPOINT: /,
    );
  });

  it('merges headers, the traces-specific ones winning, values URL-decoded', () => {
    expect(
      otlpEnvironment({
        OTEL_EXPORTER_OTLP_HEADERS: 'x-honeycomb-team=abc%3D%3D, x-dataset=rho',
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-dataset=traces',
      }).headers,
    ).toEqual({ 'x-honeycomb-team': 'abc==', 'x-dataset': 'traces' });
    expect(parseOtlpHeaders('novalue,=x,a=1')).toEqual({ a: '1' });
  });
});

describe('provider and server of a base URL', () => {
  it('names the providers of the GenAI conventions and calls other servers OpenAI-compatible', () => {
    expect(providerOf('https://api.openai.com/v1')).toBe('openai');
    expect(providerOf('https://api.groq.com/openai/v1')).toBe('groq');
    expect(providerOf('https://generativelanguage.googleapis.com/v1beta/openai')).toBe('gcp.gemini');
    expect(providerOf('https://my-resource.openai.azure.com/openai')).toBe('azure.ai.openai');
    expect(providerOf('http://127.0.0.1:8000/v1')).toBe('openai');
    expect(providerOf(undefined)).toBe('rho.in_process');
    expect(serverOf('http://127.0.0.1:8000/v1')).toEqual({ address: '127.0.0.1', port: 8000 });
    expect(serverOf('https://api.openai.com/v1')).toEqual({ address: 'api.openai.com', port: 443 });
    expect(serverOf('http://[::1]:9/v1')).toEqual({ address: '::1', port: 9 });
  });
});
