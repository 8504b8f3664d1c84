import type { IncomingMessage, ServerResponse } from 'node:http';
import { sameOrigin, tokenMatches } from './access.js';
import { sendJson } from './http.js';

/**
 * Whether a request that changes something (a control, an approval answer) may go on; refused
 * otherwise, with 403 when it lacks the `X-Rho-Token` header or comes from another origin, 415
 * when its body is not JSON. A page of another site cannot send that header without a CORS
 * preflight, which is never granted; the cookie alone (which a browser might attach) is not
 * enough to change anything.
 */
export function changeAllowed(
  request: IncomingMessage,
  response: ServerResponse,
  token: string,
  what: 'control request' | 'approval answer',
): boolean {
  const header = request.headers['x-rho-token'];
  if (!tokenMatches(token, typeof header === 'string' ? header : undefined) || !sameOrigin(request)) {
    sendJson(response, 403, { error: `A ${what} needs the X-Rho-Token header and this origin.` });
    return false;
  }
  if (!(request.headers['content-type'] ?? '').startsWith('application/json')) {
    sendJson(response, 415, { error: `Send the ${what} as application/json.` });
    return false;
  }
  return true;
}
