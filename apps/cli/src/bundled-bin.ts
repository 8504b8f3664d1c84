#!/usr/bin/env node
// The entry point of the bundled CLI (`bundle/bin.js` of the published package, built from this
// file by scripts/bundle.mjs): modules loaded from outside the bundle share its @rho packages
// (shared-packages.ts), then it is the CLI of bin.ts. The tsc build (dist/) does not use it.
import { shareBundledPackages } from './shared-packages.js';

shareBundledPackages(new URL('./', import.meta.url));
await import('./bin.js');
