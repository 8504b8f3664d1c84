import { readJsonResponse } from '@rho/model-client';

/** The model recorded when no model was chosen and the endpoint does not say which it serves. */
export const UNKNOWN_MODEL = 'unknown';

/** The most model names a message lists. */
const LISTED = 8;
/**
 * The model a `--base-url` run without `-m` talks to, from the server's model list
 * (`GET <base>/models`, as vLLM, Ollama, llama.cpp and LM Studio serve it): the one it serves;
 * `unknown` when it lists none or does not answer (no price table knows that name, so its calls
 * are unpriced); or, when it serves several, the names to choose from (the caller refuses: a
 * proxy listing hundreds has no "first" model worth running). Never throws; waits at most
 * `timeoutMs`
 * and reads at most 4 MiB of the list.
 */
export async function serverModel(
  baseURL: string,
  apiKey: string | undefined,
  timeoutMs = 2_000,
): Promise<{ model: string } | { choices: string[]; count: number }> {
  try {
    const response = await fetch(`${baseURL.replace(/\/+$/, '')}/models`, {
      headers: {
        accept: 'application/json',
        ...(apiKey === undefined || apiKey === '' ? {} : { authorization: `Bearer ${apiKey}` }),
      },
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      return { model: UNKNOWN_MODEL };
    }
    // JSON only, and at most 4 MiB of it (an event stream or an endless body is no model list).
    const list = (await readJsonResponse(response)) as { data?: Array<{ id?: unknown }> } | null | undefined;
    const ids = (Array.isArray(list?.data) ? list.data : [])
      .map((entry) => entry?.id)
      .filter((id): id is string => typeof id === 'string' && id.trim() !== '');
    if (ids.length === 0) return { model: UNKNOWN_MODEL };
    if (ids.length === 1) return { model: ids[0]! };
    return { choices: ids.slice(0, LISTED), count: ids.length };
  } catch {
    return { model: UNKNOWN_MODEL };
  }
}
