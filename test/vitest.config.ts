import { rhoProject } from '@rho/vitest-config';

export default rhoProject(import.meta.url, { name: 'repository', test: { include: ['*.test.ts'] } });
