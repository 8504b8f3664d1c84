/**
 * Test support for tool authors and rho's own suites: a minimal zip writer that builds
 * workbooks (including hostile ones: huge inflated sizes, sizes that lie) for `read_excel` tests.
 */
export { sheetXml, workbookMembers, writeZip } from './xlsx-writer.js';
export type { ZipInput } from './xlsx-writer.js';
export { runBackendConformance } from './backend-conformance.js';
export type { BackendConformanceOptions, BackendUnderTest } from './backend-conformance.js';
