/** The model recorded when no model was chosen and the endpoint does not say which it serves. */
export const UNKNOWN_MODEL = 'unknown';

/**
 * The model a `--base-url` run without `-m` talks to: the first entry of the server's model list
 * (`GET <base>/models`, as vLLM, Ollama, llama.cpp and LM Studio serve it), else `unknown`
 * (which no price table knows, so its calls are unpriced). Never throws; waits at most `timeoutMs`.
 */
export async function serverModel(baseURL: string, apiKey: string | undefined, timeoutMs = 2_000): Promise<string> {
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
      return UNKNOWN_MODEL;
    }
    const list = (await response.json()) as { data?: Array<{ id?: unknown }> } | null;
    const id = Array.isArray(list?.data) ? list.data[0]?.id : undefined;
    return typeof id === 'string' && id.trim() !== '' ? id : UNKNOWN_MODEL;
  } catch {
    return UNKNOWN_MODEL;
  }
}
