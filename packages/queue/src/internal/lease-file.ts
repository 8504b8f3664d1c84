import { utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The lease file of an attempt run by this process: its session watches it (see `RunnableTask.lease`). */
export function leaseFilePath(taskId: string, attempt: number): string {
  return join(tmpdir(), `rho-lease-${taskId}-${attempt}-${process.pid}`);
}

/** Marks the lease renewed now, for the session that watches the file (creating it the first time). */
export function touchLease(file: string): void {
  try {
    const now = new Date();
    writeFileSync(file, '');
    utimesSync(file, now, now);
  } catch {
    // The session then stops itself at its next step: the safe side.
  }
}
