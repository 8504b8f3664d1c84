// Lint rules live in tooling/eslint-config; `pnpm lint` runs them over the whole workspace at once.
export { rhoConfig as default } from '@rho/eslint-config';
