// Types of bin/compiled.js (plain JavaScript, so that bin/cairn.js can use it before tsx is loaded).
export const ROOT: string;
export const OUT_DIR: string;
export const MANIFEST_VERSION: number;
export const ENTRIES: readonly string[];
export function bundleName(entry: string): string;
/** (entry file URL or path) => its bundle's absolute path while the bundle matches the sources, else undefined. */
export type CompiledLookup = (source: URL | string) => string | undefined;
export function compiledLookup(root?: string, outDir?: string): CompiledLookup;
/** The bundle in dist/node/ of a TypeScript entry point of this checkout, while it matches the sources. */
export const compiledEntry: CompiledLookup;
