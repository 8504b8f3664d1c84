import { createRequire } from 'node:module';

type Yaml = typeof import('yaml');
let yaml: Yaml | undefined;

/**
 * The `yaml` package, loaded on first use (synchronously: the config readers and writers are
 * synchronous). A program that never reads or writes a YAML file, such as an application that
 * builds its agent in code, does not load it: about 2 MB of resident memory.
 */
export function loadYaml(): Yaml {
  yaml ??= createRequire(import.meta.url)('yaml') as Yaml;
  return yaml;
}
