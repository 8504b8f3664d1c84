import type { Linter } from 'eslint';

/** The `@rho/*` packages each workspace package may import, keyed by its directory (`packages/core`). */
export declare const layers: Record<string, { allow: string[]; tests?: string[] }>;

/** The whole flat config: re-export it from a root `eslint.config.js`. */
export declare const rhoConfig: Linter.Config[];
