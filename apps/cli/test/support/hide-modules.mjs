// Loaded with `node --import`: the packages whose name matches $RHO_TEST_HIDE_MODULES (a regular
// expression) cannot be found, as if they were not installed (ERR_MODULE_NOT_FOUND, what Node
// says for a missing package). For the checks of `rho doctor` that a machine without a database
// driver or without @vscode/ripgrep fails, on a machine that has them.
import { register } from 'node:module';

const hook = `
const pattern = new RegExp(process.env.RHO_TEST_HIDE_MODULES || '^$');
export async function resolve(specifier, context, next) {
  if (pattern.test(specifier)) {
    const error = new Error("Cannot find package '" + specifier + "' (hidden by the test)");
    error.code = 'ERR_MODULE_NOT_FOUND';
    throw error;
  }
  return next(specifier, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hook)}`);
