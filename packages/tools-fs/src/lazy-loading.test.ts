/**
 * Heavy dependencies load the first time a tool needs them, not on import: importing the package
 * (built) must not load exceljs, and the first `read_excel` call on a workbook must.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const dist = fileURLToPath(new URL('../dist/index.js', import.meta.url));
const coreDist = fileURLToPath(new URL('../../core/dist/index.js', import.meta.url));

const script = `
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const loaded = () => Object.keys(require.cache).some((path) => path.includes('exceljs'));
const tools = await import(${JSON.stringify(pathToFileURL(dist).href)});
const { createLocalBackend } = await import(${JSON.stringify(pathToFileURL(coreDist).href)});
const afterImport = loaded();
const tool = tools.createReadExcelTool();
await tool.handle({ callId: 'c', toolName: 'read_excel', arguments: { path: 'missing.xlsx', action: 'get_info' } },
  { signal: new AbortController().signal, sessionId: 's', workingDir: '/', backend: createLocalBackend() });
const afterMissingFile = loaded();
const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
const { tmpdir } = await import('node:os');
const dir = mkdtempSync(tmpdir() + '/rho-lazy-');
// An empty zip archive: it passes read_excel's size check, so exceljs is loaded to parse it.
writeFileSync(dir + '/book.xlsx', Buffer.from('504b0506' + '00'.repeat(18), 'hex'));
await tool.handle({ callId: 'c', toolName: 'read_excel', arguments: { path: dir + '/book.xlsx', action: 'get_info' } },
  { signal: new AbortController().signal, sessionId: 's', workingDir: '/', backend: createLocalBackend() });
rmSync(dir, { recursive: true, force: true });
process.stdout.write(JSON.stringify({ afterImport, afterMissingFile, afterWorkbook: loaded() }));
`;

describe('lazy loading', () => {
  it.runIf(existsSync(dist))('does not load exceljs when the package is imported', () => {
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
      encoding: 'utf8',
    });
    expect(child.status, child.stderr).toBe(0);
    expect(JSON.parse(child.stdout)).toEqual({ afterImport: false, afterMissingFile: false, afterWorkbook: true });
  });
});

describe('lazy loading of the .xls parser', () => {
  // An ES module leaves no trace in require.cache: a resolve hook records what gets loaded.
  const hooks = `
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (resolved.url.includes('@e965')) appendFileSync(process.env.RHO_LAZY_LOG, resolved.url + '\\n');
  return resolved;
}`;
  const xlsScript = `
const tools = await import(${JSON.stringify(pathToFileURL(dist).href)});
const { createLocalBackend } = await import(${JSON.stringify(pathToFileURL(coreDist).href)});
const { readFileSync, mkdtempSync, writeFileSync } = await import('node:fs');
const { tmpdir } = await import('node:os');
const loaded = () => readFileSync(process.env.RHO_LAZY_LOG, 'utf8').length > 0;
const context = { signal: new AbortController().signal, sessionId: 's', workingDir: '/', backend: createLocalBackend() };
const tool = tools.createReadExcelTool();
const afterImport = loaded();
const dir = mkdtempSync(tmpdir() + '/rho-lazy-xls-');
writeFileSync(dir + '/a.csv', 'x,y\\n');
await tool.handle({ callId: 'c', toolName: 'read_excel', arguments: { path: dir + '/a.csv', action: 'get_info' } }, context);
const afterCsv = loaded();
// An OLE2 signature and nothing else: SheetJS is loaded to parse it (and refuses it).
writeFileSync(dir + '/old.xls', Buffer.from('d0cf11e0a1b11ae1', 'hex'));
await tool.handle({ callId: 'c', toolName: 'read_excel', arguments: { path: dir + '/old.xls', action: 'get_info' } }, context);
process.stdout.write(JSON.stringify({ afterImport, afterCsv, afterXls: loaded() }));
`;

  it.runIf(existsSync(dist))('loads SheetJS only for an .xls file', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'rho-lazy-hooks-'));
    writeFileSync(join(dir, 'hooks.mjs'), hooks);
    writeFileSync(join(dir, 'log'), '');
    const register = `data:text/javascript,import{register}from"node:module";register(${JSON.stringify(pathToFileURL(join(dir, 'hooks.mjs')).href)});`;
    const child = spawnSync(process.execPath, ['--import', register, '--input-type=module', '-e', xlsScript], {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
      encoding: 'utf8',
      env: { ...process.env, RHO_LAZY_LOG: join(dir, 'log') },
    });
    expect(child.status, child.stderr).toBe(0);
    expect(JSON.parse(child.stdout)).toEqual({ afterImport: false, afterCsv: false, afterXls: true });
  });
});
