// Formatting lives in tooling/prettier-config; `pnpm format` writes it, `pnpm format:check` checks it.
export { default } from '@rho/prettier-config';
