import { rhoProject } from '@rho/vitest-config';

// Not `workspace`: test/'s project (the repository's own checks) has that name.
export default rhoProject(import.meta.url, { name: '@rho/workspace' });
