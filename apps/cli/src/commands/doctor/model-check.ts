import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { DoctorContext } from './doctor-settings.js';
import { result, seconds, type CheckResult } from './report.js';

/** The model client's endpoint when none is set (`@rho/model-client`). */
const DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/** Where a setting came from, for people: `.env` for what the current directory's `.env` set. */
function origin(source: string | undefined, variable: string, fromDotenv: ReadonlySet<string>): string {
  if (source === `env ${variable}` && fromDotenv.has(variable)) return `${variable} of ./.env`;
  if (source === undefined) return 'the default';
  return source.startsWith('env ') ? `$${source.slice(4)}` : source;
}

/**
 * The model endpoint and its key, as a run resolves them. Without `--online`: which endpoint and
 * where it and the key come from (never the key), failing as a run would when there is neither
 * a key nor an endpoint of one's own. With `--online`: one `GET <endpoint>/models` (free, and
 * answered by OpenAI, vLLM, Ollama, llama.cpp, LM Studio, OpenRouter), with the key, within the
 * timeout: reachable, key accepted, and whether the model is among those listed.
 */
export async function modelCheck(context: DoctorContext, signal: AbortSignal): Promise<CheckResult> {
  const { modelSettingsSection } = await import('@rho/core/settings');
  const resolved = await context.settings([modelSettingsSection]);
  const model = resolved.settings.model;
  if (model.gguf !== undefined) {
    const path = resolve(model.gguf.path);
    if (!existsSync(path))
      return result(
        'model',
        'fail',
        `model ${model.model}: the GGUF file ${path} does not exist`,
        'check --model gguf:PATH',
      );
    return result('model', 'ok', `model ${model.model}: a local GGUF file, run in this process (nothing to reach)`);
  }
  const baseURL = model.baseURL ?? DEFAULT_BASE_URL;
  const endpoint = `${resolved.redactor.text(baseURL)} (${model.baseURL === undefined ? 'the default' : origin(resolved.sources['base_url'], 'OPENAI_BASE_URL', context.fromDotenv)})`;
  const key =
    model.apiKey === undefined
      ? 'no API key'
      : `the API key of ${origin(resolved.sources['api_key'], 'OPENAI_API_KEY', context.fromDotenv)}`;
  const said = `model ${model.model} at ${endpoint}, ${key}`;
  if (model.baseURL === undefined && model.apiKey === undefined)
    return result(
      'model',
      'fail',
      `${said}: a run stops here (the default endpoint needs a key)`,
      'set OPENAI_API_KEY, or point --base-url (OPENAI_BASE_URL) at an OpenAI-compatible server that needs none',
    );
  if (!context.online) return result('model', 'ok', `${said} (rho doctor --online asks the endpoint)`);
  return askEndpoint(said, baseURL, model.apiKey, model.model, context.timeoutMs, signal, resolved.redactor.text);
}

async function askEndpoint(
  said: string,
  baseURL: string,
  apiKey: string | undefined,
  name: string,
  timeoutMs: number,
  signal: AbortSignal,
  redact: (text: string) => string,
): Promise<CheckResult> {
  const url = `${baseURL.replace(/\/+$/, '')}/models`;
  const urlFix = 'check --base-url (OPENAI_BASE_URL) and that the server runs';
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { accept: 'application/json', ...(apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` }) },
      signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const why =
      (error as Error).name === 'TimeoutError' || (error as Error).name === 'AbortError'
        ? `no answer within ${seconds(timeoutMs)}`
        : (cause?.message ?? cause?.code ?? (error as Error).message);
    return result('model', 'fail', redact(`${said}: GET ${url} failed: ${why}`), urlFix);
  }
  const text = await response.text().catch(() => '');
  if (response.status === 401 || response.status === 403)
    return result(
      'model',
      'fail',
      redact(`${said}: the endpoint refused the key (HTTP ${response.status}${errorMessage(text)})`),
      apiKey === undefined ? 'set OPENAI_API_KEY' : 'check OPENAI_API_KEY (expired, revoked, or for another endpoint)',
    );
  if (response.status >= 500)
    return result(
      'model',
      'fail',
      redact(`${said}: GET ${url} answered HTTP ${response.status}${errorMessage(text)}`),
      'look at the model server (its log), or wait until it is back',
    );
  if (!response.ok)
    return result(
      'model',
      'warn',
      redact(
        `${said}: the endpoint answers, but GET ${url} is HTTP ${response.status}${errorMessage(text)}, so the key was not checked`,
      ),
    );
  let ids: string[] | undefined;
  try {
    const body = JSON.parse(text) as { data?: { id?: unknown }[] };
    ids = Array.isArray(body.data) ? body.data.map((entry) => String(entry.id)) : undefined;
  } catch {
    ids = undefined;
  }
  if (ids === undefined)
    return result('model', 'ok', redact(`${said}: the endpoint answers (its model list is not a list)`));
  if (ids.includes(name))
    return result('model', 'ok', redact(`${said}: the endpoint answers, and lists ${name} among ${ids.length} models`));
  const shown = ids.slice(0, 5).join(', ') + (ids.length > 5 ? `, and ${ids.length - 5} more` : '');
  return result(
    'model',
    'warn',
    redact(
      `${said}: the endpoint answers, but ${name} is not among the ${ids.length} models it lists${ids.length === 0 ? '' : ` (${shown})`}`,
    ),
    'check --model (OPENAI_MODEL); some servers serve models they do not list',
  );
}

/** `: message` of an OpenAI-style error body, clipped. */
function errorMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string };
    const message = typeof body.error === 'string' ? body.error : body.error?.message;
    if (typeof message === 'string' && message !== '') return `: ${message.slice(0, 200)}`;
  } catch {
    // not JSON
  }
  return '';
}
