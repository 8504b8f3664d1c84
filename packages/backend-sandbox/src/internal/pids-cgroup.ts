import { mkdirSync, readFileSync, rmdirSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

/** A pids cgroup of its own for one sandbox: the kernel refuses forks past `pids.max`. */
export interface PidsCgroup {
  /** The cgroup's directory; a process joins by writing its pid to `cgroup.procs` in it. */
  path: string;
  /** Removes the cgroup once its processes are gone (retried a few times). */
  remove(): Promise<void>;
}

let counter = 0;

/**
 * A new pids cgroup under this process's own, limited to `max` processes, where this process may
 * make one (root, or a delegated cgroup v2 subtree); undefined elsewhere. The limit on processes
 * then holds for root too, which RLIMIT_NPROC does not bind.
 */
export function createPidsCgroup(max: number): PidsCgroup | undefined {
  if (process.platform !== 'linux') return undefined;
  let own: string;
  try {
    own = readFileSync('/proc/self/cgroup', 'utf8');
  } catch {
    return undefined;
  }
  const candidates: string[] = [];
  for (const line of own.split('\n')) {
    const [, controllers, path] = line.split(':');
    if (controllers === undefined || path === undefined) continue;
    // cgroup v1: a hierarchy of its own for the pids controller.
    if (controllers.split(',').includes('pids')) candidates.push(join('/sys/fs/cgroup/pids', path));
    // cgroup v2: the unified hierarchy, when it offers the pids controller.
    if (line.startsWith('0::')) {
      for (const root of ['/sys/fs/cgroup', '/sys/fs/cgroup/unified']) {
        try {
          if (readFileSync(join(root, 'cgroup.controllers'), 'utf8').split(/\s+/).includes('pids'))
            candidates.push(join(root, path));
        } catch {
          // Not a cgroup v2 mount with pids.
        }
      }
    }
  }
  for (const parent of candidates) {
    counter += 1;
    const path = join(parent, `rho-sandbox-${process.pid}-${counter}`);
    try {
      mkdirSync(path);
    } catch {
      continue;
    }
    try {
      writeFileSync(join(path, 'pids.max'), String(max));
    } catch {
      rmdirSync(path);
      continue;
    }
    return {
      path,
      async remove() {
        for (let attempt = 0; attempt < 50 && existsSync(path); attempt += 1) {
          try {
            rmdirSync(path);
            return;
          } catch {
            // Processes still leaving (EBUSY): wait for the kernel to reap them.
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
        }
      },
    };
  }
  return undefined;
}
