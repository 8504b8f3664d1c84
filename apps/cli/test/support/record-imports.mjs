// Loaded with `node --import`: appends every module specifier that names the Markdown renderer,
// the syntax highlighter, OpenTelemetry or the web dashboard to the file $RHO_TEST_IMPORTS, so a
// test can see whether they loaded.
import { register } from 'node:module';

const hook = `
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  if (/^(marked|marked-terminal|cli-highlight|highlight\\.js|@opentelemetry\\/[^/]+|@rho\\/otel|@rho\\/dashboard)(\\/|$)/.test(specifier)) appendFileSync(process.env.RHO_TEST_IMPORTS, specifier + '\\n');
  return next(specifier, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hook)}`);
