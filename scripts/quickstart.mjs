// `pnpm quickstart`: the last step of the README's set-up command (after `pnpm build`).
// With a model configured (OPENAI_API_KEY or OPENAI_BASE_URL in the environment or in ./.env)
// it runs one read-only task on this repository; without one it says how to give one and
// exits 0, so a fresh set-up never ends in a failing API call.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = join(root, 'apps', 'cli', 'dist', 'bin.js');
if (!existsSync(bin)) {
  console.error(`quickstart: ${bin} is missing; run \`pnpm build\` first.`);
  process.exit(1);
}

// The CLI's own .env reader, so this script and `rho` agree on what counts as configured.
const { loadDotenv } = await import(join(root, 'apps', 'cli', 'dist', 'dotenv.js'));
const env = { ...process.env };
loadDotenv(env, process.cwd());
const configured = (name) => env[name] !== undefined && env[name] !== '';

if (!configured('OPENAI_API_KEY') && !configured('OPENAI_BASE_URL')) {
  console.log(`rho is built. No model is configured yet, so no task was run. Give one, then run a task:

  export OPENAI_API_KEY=sk-...                          # OpenAI
  export OPENAI_BASE_URL=http://127.0.0.1:11434/v1      # or any OpenAI-compatible server (Ollama, vLLM, llama.cpp): no key needed
  export OPENAI_MODEL=qwen2.5-coder                     # optional (default gpt-5-mini)

(or put those lines, without \`export\`, in a .env file here), then:

  pnpm rho "What does this repository do?"`);
  process.exit(0);
}

const task = 'What does this repository do?';
console.log(`rho is built. Running a first read-only task: pnpm rho "${task}"\n`);
const result = spawnSync(process.execPath, [bin, task], { stdio: 'inherit', cwd: process.cwd(), env: process.env });
if (result.error !== undefined) {
  console.error(`quickstart: could not start rho: ${result.error.message}`);
  process.exit(1);
}
process.exit(result.status ?? 1);
