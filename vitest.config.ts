import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: ['packages/*', 'apps/*', 'examples/*', 'test'],
    reporters: ['default', './tooling/vitest-config/summary-reporter.js'],
  },
});
