#!/usr/bin/env node
// The entry point of the bundled CLI (`bundle/bin.js` of the published package, built from this
// file by scripts/bundle.mjs): modules loaded from outside the bundle share its @rho packages
// (shared-packages.ts), then it is the CLI of bin.ts. The tsc build (dist/) does not use it.
import { shareBundledPackages } from './shared-packages.js';

shareBundledPackages(new URL('./', import.meta.url));
// The bundle is minified: a stack trace (`--debug`) names the built files and their lines through
// the source maps next to the chunks. Off otherwise: reading them costs start-up time.
if (process.argv.includes('--debug')) process.setSourceMapsEnabled(true);
await import('./bin.js');
