import { startLoopbackServer } from '@rho/core/testing';
import { writeFileSync } from 'node:fs';
const server = await startLoopbackServer({ respond: () => ({ type: 'response', text: 'ok', usage: null }) });
writeFileSync('/tmp/qe/burl', server.url);
setInterval(() => {}, 1e6);
