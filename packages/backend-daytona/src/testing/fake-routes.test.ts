import { Configuration as ApiConfiguration, SandboxApiAxiosParamCreator } from '@daytona/api-client';
import {
  Configuration,
  FileSystemApiAxiosParamCreator,
  InfoApiAxiosParamCreator,
  ProcessApiAxiosParamCreator,
} from '@daytona/toolbox-api-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeDaytona, type FakeDaytona } from './index.js';

// The fake's routes are the generated clients' routes: for every operation the fake serves, the
// SDK's own generated request builder (the code the SDK sends requests with) is asked for its
// method and URL, and the fake's template must match it. Together with the handlers' types
// (OperationArgs / OperationReply of the same generated classes, checked by tsc), a new SDK
// version that moves, renames or reshapes an operation fails here or in type checking.
type Creator = (...args: unknown[]) => Promise<{ url: string; options: { method?: string } }>;
const creators: Record<string, () => Record<string, Creator>> = {
  SandboxApi: () => SandboxApiAxiosParamCreator(new ApiConfiguration()) as unknown as Record<string, Creator>,
  ProcessApi: () => ProcessApiAxiosParamCreator(new Configuration()) as unknown as Record<string, Creator>,
  FileSystemApi: () => FileSystemApiAxiosParamCreator(new Configuration()) as unknown as Record<string, Creator>,
  InfoApi: () => InfoApiAxiosParamCreator(new Configuration()) as unknown as Record<string, Creator>,
};

let fake: FakeDaytona;
beforeAll(async () => {
  fake = await startFakeDaytona();
});
afterAll(async () => {
  await fake.close();
});

describe('the fake Daytona API against the generated clients', () => {
  it('serves every operation at the method and path the generated client builds', async () => {
    const routes = [...fake.routes.control, ...fake.routes.toolbox];
    expect(routes.length).toBeGreaterThan(10);
    for (const route of routes) {
      const creator = creators[route.api]?.()[route.operation];
      expect(creator, `${route.api}.${route.operation} exists in the generated client`).toBeTypeOf('function');
      // Placeholder arguments: strings for path and query parameters, objects for bodies.
      const args = Array.from({ length: creator!.length }, (_, index) => `p${index}`);
      const built = await creator!(...args);
      const path = new URL(built.url, 'http://generated').pathname;
      const pattern = new RegExp(`^${route.template.replace(/\{\w+\}/g, 'p\\d+')}$`);
      expect(path, `${route.api}.${route.operation}`).toMatch(pattern);
      expect(built.options.method, `${route.api}.${route.operation}`).toBe(route.method);
    }
  });

  it('answers an endpoint it does not implement with 404 and records it', async () => {
    const response = await fetch(`${fake.apiUrl}/sandbox/some-id/fork`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fake.apiKey}` },
    });
    expect(response.status).toBe(404);
    expect(fake.unknownRoutes).toEqual(['POST /api/sandbox/some-id/fork']);
    fake.unknownRoutes.length = 0;
  });
});
