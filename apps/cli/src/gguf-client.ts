import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ModelSettings } from '@rho/core/settings';
import { UsageError } from './exit-codes.js';

/** The in-process GGUF client of `--model gguf:PATH`; its package is imported only here. */
export async function loadGgufClient(
  gguf: NonNullable<ModelSettings['gguf']>,
): Promise<import('@rho/model-gguf').GgufModelClient> {
  const { path, toolChoice } = gguf;
  if (path.trim() === '')
    throw new UsageError({ message: 'The model gguf: needs a path: --model gguf:PATH (a .gguf file).' });
  let module: typeof import('@rho/model-gguf');
  try {
    module = await import('@rho/model-gguf');
  } catch (error) {
    throw new UsageError({
      message: `--model gguf:${path} needs the package @rho/model-gguf (it brings node-llama-cpp and llama.cpp's prebuilt binaries): install it next to rho, for example \`npm install -g @rho/model-gguf\`. (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`,
    });
  }
  const modelPath = resolve(path);
  if (!existsSync(modelPath))
    throw new UsageError({
      message: `GGUF model not found: ${modelPath}. Pass the path of a .gguf file to --model gguf:PATH.`,
    });
  return module.createGgufModelClient({ modelPath, ...(toolChoice === undefined ? {} : { toolChoice }) });
}
