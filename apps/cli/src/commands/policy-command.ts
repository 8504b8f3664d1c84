import { formatPolicyExplanation } from '@rho/permissions';
import { EXIT } from '../exit-codes.js';
import type { Terminal } from '../terminal.js';
import { styles } from '../terminal.js';
import type { PolicyCheckArguments } from './policy-explain.js';
import { explainPolicyCheck } from './policy-explain.js';

export type { PolicyCheckArguments } from './policy-explain.js';

/** `rho policy check`: prints the decision; exit 0 when allowed, 1 when refused. */
export async function policyCheckCommand(
  argv: PolicyCheckArguments,
  terminal: Terminal,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const explanation = await explainPolicyCheck(argv, env);
  if (argv.json) {
    terminal.stdout.write(`${JSON.stringify(explanation, null, 2)}\n`);
  } else if (terminal.color && terminal.stdout.isTTY === true) {
    terminal.stdout.write(`${colourVerdict(formatPolicyExplanation(explanation))}\n`);
  } else {
    terminal.stdout.write(`${formatPolicyExplanation(explanation)}\n`);
  }
  return explanation.allowed ? EXIT.completed : EXIT.failed;
}

function colourVerdict(text: string): string {
  const style = styles(true);
  return text
    .replace(/\b(ALLOWED|allowed)\b/, (word) => style.green(word))
    .replace(/\b(REFUSED|refused)\b/, (word) => style.red(word));
}
