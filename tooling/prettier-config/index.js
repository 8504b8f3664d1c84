// The one formatting style of the workspace; the root `prettier.config.js` re-exports it.
// Options are the code's existing habits (single quotes, semicolons, trailing commas, two spaces);
// the width is the one change: 120 wraps the lines that ran to 200 characters and more.

/** @type {import('prettier').Config} */
const config = {
  printWidth: 120,
  singleQuote: true,
  trailingComma: 'all',
  semi: true,
  tabWidth: 2,
  arrowParens: 'always',
  endOfLine: 'lf',
};

export default config;
