// Types of api-surface.mjs, for test/public-surface.test.ts.

export interface SurfaceEntry {
  specifier: string;
  subpath: string;
  source: string;
}

export interface SurfacePackage {
  name: string;
  directory: string;
  dir: string;
  entries: SurfaceEntry[];
}

export interface SurfaceName {
  name: string;
  kind: 'value' | 'type';
  detail: string;
  declaredIn: string | undefined;
}

export interface EntrySurface extends SurfaceEntry {
  names: SurfaceName[];
}

export type Surface = Map<string, { pkg: SurfacePackage; entries: EntrySurface[] }>;

/** `Map<specifier, Map<name, record line>>`. */
export type SurfaceLines = Map<string, Map<string, string>>;

export interface SurfaceDifference {
  specifier: string;
  added: string[];
  removed: string[];
  changed: { name: string; before: string | undefined; after: string | undefined }[];
}

export const root: string;
export const recordDirectory: string;
export const updateCommand: string;
export function workspacePackages(): SurfacePackage[];
export function createSurfaceProgram(packages?: SurfacePackage[]): unknown;
export function currentSurface(packages?: SurfacePackage[], program?: unknown): Surface;
export function recordPath(pkg: SurfacePackage): string;
export function renderRecord(pkg: SurfacePackage, entries: EntrySurface[]): string;
export function parseRecord(text: string): SurfaceLines;
export function compareSurface(recorded: SurfaceLines, current: SurfaceLines): SurfaceDifference[];
export function surfaceLines(entries: EntrySurface[]): SurfaceLines;
export function describeDifferences(differences: SurfaceDifference[]): string;
export function checkAll(surface?: Surface): SurfaceDifference[];
export function updateAll(surface?: Surface): string[];
export function exposedUnexported(
  packages?: SurfacePackage[],
  program?: unknown,
): { name: string; declaredIn: string | undefined; via: string; exportedBy: string[] }[];
