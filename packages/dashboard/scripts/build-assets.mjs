// Bundles the dashboard's page (web/) into dist/assets at package build time: one script (Preact
// and uPlot included) and one stylesheet, served by the package itself, so the dashboard works
// offline and loads nothing from a CDN.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';

const web = new URL('../web/', import.meta.url);
const out = new URL('../dist/assets/', import.meta.url);
mkdirSync(out, { recursive: true });
const result = await build({
  entryPoints: [new URL('main.tsx', web).pathname],
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2022'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outdir: out.pathname,
  entryNames: 'app',
  metafile: true,
  legalComments: 'eof',
  logLevel: 'warning',
});
writeFileSync(new URL('index.html', out), readFileSync(new URL('index.html', web)));
const sizes = Object.entries(result.metafile.outputs).map(([file, { bytes }]) => `${file.split('/').pop()} ${bytes} B`);
writeFileSync(new URL('sizes.txt', out), `${sizes.join('\n')}\n`);
