// Free of imports: `rho --help` lists these without loading the REPL.

/** Slash commands of the REPL, with their help text. */
export const REPL_COMMANDS: Readonly<Record<string, string>> = {
  '/help': 'show this help',
  '/compact': '/compact [instructions]: summarise the conversation to free context',
  '/clear': 'clear the screen',
  '/approve': 'toggle auto-approve for this session',
  '/status': 'model, profile, usage, cost, context, instruction files and session id',
  '/resume': '/resume [id|prefix|latest]: continue another session (alone: pick one of the 10 most recent)',
  '/undo': '/undo [TURN]: put the files back as before the last turn that changed them (or after TURN); asks first',
  '/upload': '/upload LOCAL [REMOTE]: copy a file or directory into the Daytona sandbox',
  '/download': '/download REMOTE [LOCAL]: copy a file or directory out of the Daytona sandbox',
  '/exit': 'leave (also /quit, exit, quit, Ctrl+D)',
};
