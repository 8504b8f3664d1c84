// Loaded with `node --import`: appends every module specifier that names the Markdown renderer,
// the syntax highlighter, OpenTelemetry or the web dashboard to the file $RHO_TEST_IMPORTS, so a
// test can see whether they loaded. A package's `settings` entry (its settings section, which loads
// no SDK or driver: test/barrel-clean.test.ts) is not recorded.
// $RHO_TEST_IMPORTS_PATTERN (a regular expression) records other modules instead, for example
// the PostgreSQL driver and @rho/fleet.
import { register } from 'node:module';

const hook = `
import { appendFileSync } from 'node:fs';
const pattern = new RegExp(process.env.RHO_TEST_IMPORTS_PATTERN || '^(marked|marked-terminal|cli-highlight|highlight\\\\.js|@opentelemetry/[^/]+|@rho/otel(?!/settings$)|@rho/dashboard)(/|$)');
export async function resolve(specifier, context, next) {
  if (pattern.test(specifier)) appendFileSync(process.env.RHO_TEST_IMPORTS, specifier + '\\n');
  return next(specifier, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hook)}`);
