import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AnyTool } from '@rho/core';
import type { PermissionProfile } from '@rho/permissions';
import { UsageError } from './exit-codes.js';
import { syntaxErrorPlace, watchModuleLoads } from './module-syntax.js';

/**
 * A tool package named in `tool_packages` or by `--tool-package`: a package name resolved the
 * way Node resolves one (the nearest `node_modules/NAME` from each base directory upwards), or a
 * path (starting with `.`, `/` or `~`) to a package directory or a module file.
 */
export interface ToolPackageReference {
  /** As written. */
  spec: string;
  /** Directories a name is looked up from, in order; a relative path resolves against the first. */
  baseDirs: string[];
  /** Where it was named, for messages (`agent.yaml`, `--tool-package`). */
  origin: string;
}

/** What a tool package's factory receives. */
export interface ToolPackageContext {
  profile: PermissionProfile;
  workingDir: string;
}

/** The tools one package gave, and where they came from. */
export interface LoadedToolPackage {
  spec: string;
  /** The module file that was imported. */
  entry: string;
  tools: AnyTool[];
}

/**
 * Imports each package and collects its tools. A package exports tools through the core tool
 * contract, in the first of these forms it has:
 * - `createTools(context)` (or a default export that is a function): a factory receiving the
 *   profile and working directory, returning a tool or a list of tools (or a promise of them);
 * - a default export that is a tool or a list of tools;
 * - named exports that are tools or lists of tools (every one of them is loaded).
 */
export async function loadToolPackages(
  references: readonly ToolPackageReference[],
  context: ToolPackageContext,
): Promise<LoadedToolPackage[]> {
  const loaded: LoadedToolPackage[] = [];
  for (const reference of references) {
    const entry = resolveToolPackage(reference);
    let module: Record<string, unknown>;
    const loads = watchModuleLoads();
    try {
      module = (await import(pathToFileURL(entry).href)) as Record<string, unknown>;
    } catch (error) {
      const where = error instanceof SyntaxError ? syntaxErrorPlace(loads, packageFolder(entry)) : undefined;
      throw new UsageError({
        message:
          where === undefined
            ? `Tool package ${reference.spec} (${reference.origin}) failed to load from ${entry}: ${firstLine(error)}`
            : `Tool package ${reference.spec} (${reference.origin}) failed to load: a syntax error in ${where}: ${firstLine(error)}`,
      });
    } finally {
      loads.stop();
    }
    const tools = await toolsOf(module, reference, context);
    if (tools.length === 0) {
      throw new UsageError({
        message: `Tool package ${reference.spec} (${reference.origin}) exports no tools: export tools made with defineTool from @rho/core, or createTools({ profile, workingDir }) returning them.`,
      });
    }
    loaded.push({ spec: reference.spec, entry, tools });
  }
  return loaded;
}

/** The module file a reference names; a clear error when there is none. */
export function resolveToolPackage(reference: ToolPackageReference): string {
  const { spec } = reference;
  if (isPathSpec(spec)) {
    const expanded = spec.startsWith('~/') ? join(process.env.HOME ?? '~', spec.slice(2)) : spec;
    const path = isAbsolute(expanded) ? expanded : resolve(reference.baseDirs[0] ?? process.cwd(), expanded);
    if (!existsSync(path))
      throw new UsageError({
        message: `Tool package not found: ${path} (${spec}, ${reference.origin}). Pass a package directory or a module file.`,
      });
    return statSync(path).isDirectory() ? packageEntry(path, spec, reference.origin) : path;
  }
  if (!/^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*$/i.test(spec)) {
    throw new UsageError({
      message: `Tool package ${JSON.stringify(spec)} (${reference.origin}) is neither a package name nor a path (start paths with ./ or /).`,
    });
  }
  const searched: string[] = [];
  for (const base of reference.baseDirs) {
    for (let directory = resolve(base); ; directory = dirname(directory)) {
      const candidate = join(directory, 'node_modules', spec);
      if (!searched.includes(candidate)) {
        searched.push(candidate);
        if (existsSync(join(candidate, 'package.json'))) return packageEntry(candidate, spec, reference.origin);
      }
      if (dirname(directory) === directory) break;
    }
  }
  throw new UsageError({
    message: `Tool package ${spec} (${reference.origin}) is not installed: no node_modules/${spec} above ${reference.baseDirs.join(' or ')}. Install it there (npm install ${spec}) or name it by path.`,
  });
}

function isPathSpec(spec: string): boolean {
  return spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('~') || isAbsolute(spec);
}

/** The ESM entry of a package directory: `exports` (import/node/default), then `module`, `main`, `index.js`. */
function packageEntry(directory: string, spec: string, origin: string): string {
  const manifestPath = join(directory, 'package.json');
  let manifest: { exports?: unknown; main?: unknown; module?: unknown } = {};
  if (existsSync(manifestPath)) {
    try {
      manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as typeof manifest;
    } catch (error) {
      throw new UsageError({
        message: `Tool package ${spec} (${origin}): cannot read ${manifestPath}: ${firstLine(error)}`,
      });
    }
  }
  const exported = exportTarget(manifest.exports);
  const relative =
    exported ??
    (typeof manifest.module === 'string'
      ? manifest.module
      : typeof manifest.main === 'string'
        ? manifest.main
        : 'index.js');
  const entry = resolve(directory, relative);
  if (!existsSync(entry)) {
    throw new UsageError({
      message: `Tool package ${spec} (${origin}): its entry ${entry} does not exist. Build the package first (for example npm run build).`,
    });
  }
  return entry;
}

function exportTarget(exports: unknown): string | undefined {
  if (typeof exports === 'string') return exports;
  if (Array.isArray(exports)) return exports.map(exportTarget).find((item) => item !== undefined);
  if (exports === null || typeof exports !== 'object') return undefined;
  const map = exports as Record<string, unknown>;
  if ('.' in map) return exportTarget(map['.']);
  for (const condition of ['import', 'node', 'default']) {
    if (condition in map) {
      const target = exportTarget(map[condition]);
      if (target !== undefined) return target;
    }
  }
  return undefined;
}

async function toolsOf(
  module: Record<string, unknown>,
  reference: ToolPackageReference,
  context: ToolPackageContext,
): Promise<AnyTool[]> {
  const factory =
    typeof module.createTools === 'function'
      ? module.createTools
      : typeof module.default === 'function'
        ? module.default
        : undefined;
  let candidates: unknown[];
  if (factory !== undefined) {
    let made: unknown;
    try {
      made = await (factory as (context: ToolPackageContext) => unknown)({
        profile: context.profile,
        workingDir: context.workingDir,
      });
    } catch (error) {
      throw new UsageError({
        message: `Tool package ${reference.spec} (${reference.origin}): its tool factory failed: ${firstLine(error)}`,
      });
    }
    candidates = Array.isArray(made) ? made : [made];
    const bad = candidates.find((item) => !isTool(item));
    if (bad !== undefined)
      throw new UsageError({
        message: `Tool package ${reference.spec} (${reference.origin}): its tool factory returned something that is not a tool (${describe(bad)}); return tools made with defineTool.`,
      });
    return candidates as AnyTool[];
  }
  if (
    module.default !== undefined &&
    (isTool(module.default) || (Array.isArray(module.default) && module.default.every(isTool)))
  ) {
    return Array.isArray(module.default) ? (module.default as AnyTool[]) : [module.default as AnyTool];
  }
  candidates = Object.entries(module)
    .filter(([name]) => name !== 'default')
    .flatMap(([, value]) => (Array.isArray(value) && value.length > 0 && value.every(isTool) ? value : [value]))
    .filter(isTool);
  // The same tool exported under two names (or in a list and alone) is loaded once.
  return [...new Set(candidates as AnyTool[])];
}

/** Whether a value has the shape of a core tool: a name, a description, an object schema and a handler. */
function isTool(value: unknown): value is AnyTool {
  if (value === null || typeof value !== 'object') return false;
  const tool = value as Record<string, unknown>;
  return (
    typeof tool.name === 'string' &&
    typeof tool.description === 'string' &&
    typeof tool.handle === 'function' &&
    typeof tool.parameters === 'object' &&
    tool.parameters !== null
  );
}

function describe(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? typeof value;
  const name = (value as { name?: unknown }).name;
  return typeof name === 'string' ? `an object named ${name} without description, parameters or handle` : 'an object';
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}

/** The folder of the package a module file belongs to (the nearest with a package.json), else its own folder. */
function packageFolder(file: string): string {
  for (let directory = dirname(file); ; directory = dirname(directory)) {
    if (existsSync(join(directory, 'package.json'))) return directory;
    if (dirname(directory) === directory) return dirname(file);
  }
}
