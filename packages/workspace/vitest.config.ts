import { rhoProject } from '@rho/vitest-config';

export default rhoProject(import.meta.url);
