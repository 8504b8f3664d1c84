/** Hosts of providers the GenAI conventions name (`gen_ai.provider.name` well-known values). */
const PROVIDERS: readonly (readonly [RegExp, string])[] = [
  [/(^|\.)openai\.azure\.com$/, 'azure.ai.openai'],
  [/(^|\.)services\.ai\.azure\.com$/, 'azure.ai.inference'],
  [/(^|\.)api\.openai\.com$/, 'openai'],
  [/(^|\.)anthropic\.com$/, 'anthropic'],
  [/(^|\.)generativelanguage\.googleapis\.com$/, 'gcp.gemini'],
  [/(^|\.)aiplatform\.googleapis\.com$/, 'gcp.vertex_ai'],
  [/(^|\.)bedrock(-runtime)?\.[a-z0-9-]+\.amazonaws\.com$/, 'aws.bedrock'],
  [/(^|\.)api\.groq\.com$/, 'groq'],
  [/(^|\.)api\.deepseek\.com$/, 'deepseek'],
  [/(^|\.)api\.mistral\.ai$/, 'mistral_ai'],
  [/(^|\.)api\.x\.ai$/, 'x_ai'],
  [/(^|\.)api\.perplexity\.ai$/, 'perplexity'],
  [/(^|\.)api\.cohere\.(ai|com)$/, 'cohere'],
];

/**
 * `gen_ai.provider.name` for a model client's base URL: a provider the conventions name when the
 * host is one of theirs, else `openai` (rho speaks the OpenAI API; an unknown host is an
 * OpenAI-compatible server), and `rho.in_process` for a client without a URL (a GGUF model).
 */
export function providerOf(baseURL: string | undefined): string {
  if (baseURL === undefined) return 'rho.in_process';
  let host: string;
  try {
    host = new URL(baseURL).hostname.toLowerCase();
  } catch {
    return 'openai';
  }
  return PROVIDERS.find(([pattern]) => pattern.test(host))?.[1] ?? 'openai';
}

/** `server.address` and `server.port` of a base URL (the scheme's port when it names none). */
export function serverOf(baseURL: string | undefined): { address: string; port: number } | undefined {
  if (baseURL === undefined) return undefined;
  try {
    const url = new URL(baseURL);
    const port = url.port === '' ? (url.protocol === 'http:' ? 80 : 443) : Number(url.port);
    return { address: url.hostname.replace(/^\[|\]$/g, ''), port };
  } catch {
    return undefined;
  }
}
