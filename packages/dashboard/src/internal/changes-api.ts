import type { ServerResponse } from 'node:http';
import { RhoError } from '@rho/core';
import type { DashboardSource } from '../dashboard-source.js';
import { sendJson } from './http.js';
import { readSessionChanges } from './session-changes.js';

/**
 * `GET /api/sessions/:id/changes`: what the session changed (see session-changes.ts). 404 for no
 * such session; 501 when the source has no local files of its sessions (a fleet's); 500, saying
 * what failed, when the workspace's record or git cannot be read.
 */
export async function sessionChanges(response: ServerResponse, id: string, source: DashboardSource): Promise<void> {
  const session = await source.getSession(id);
  if (session === undefined) {
    sendJson(response, 404, { error: `No session ${id}.` });
    return;
  }
  const directory = source.sessionDirectory === undefined ? undefined : await source.sessionDirectory(id);
  if (directory === undefined) {
    sendJson(response, 501, {
      error: `This dashboard's source (${source.description}) has no local files of session ${id}: see its changes with rho diff ${id} on the machine it ran on.`,
    });
    return;
  }
  try {
    sendJson(response, 200, await readSessionChanges(id, directory, session.changes));
  } catch (error) {
    if (!RhoError.isInstance(error)) throw error;
    sendJson(response, 500, { error: error.message, code: error.code });
  }
}
