import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Every stream the daemon syncs; each has a default mapping in `config/mappings/<stream>.yaml`. */
import type { StreamName } from '../config/stream-names.js';
export { STREAM_NAMES, isStreamName, type StreamName } from '../config/stream-names.js';

let packageRoot: string | undefined;

/**
 * The folder holding `package.json`, found by walking up from this module. Works from `src/`
 * (vitest, tsx) and from `dist/src/` (compiled) alike, where a fixed `../..` would not.
 */
export function findPackageRoot(from: string = path.dirname(fileURLToPath(import.meta.url))): string {
  if (packageRoot && from === path.dirname(fileURLToPath(import.meta.url))) return packageRoot;
  let dir = from;
  for (;;) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'config', 'mappings'))) {
      packageRoot = dir;
      return dir;
    }
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`cannot find the freight-sync package root (config/mappings) above ${from}`);
    dir = up;
  }
}

export function defaultMappingsDir(): string {
  return path.join(findPackageRoot(), 'config', 'mappings');
}

export function defaultMappingFile(stream: StreamName): string {
  return path.join(defaultMappingsDir(), `${stream}.yaml`);
}
