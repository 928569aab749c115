import { readFileSync } from 'node:fs';
import path from 'node:path';
import { findPackageRoot } from '../mapping/default-mappings.js';

export interface BuildInfo {
  version: string;
  node: string;
}

/** The installed freight-sync version (package.json) and the Node.js running it: `freight_sync_build_info`. */
export function buildInfo(): BuildInfo {
  let version = 'unknown';
  try {
    const manifest = JSON.parse(readFileSync(path.join(findPackageRoot(), 'package.json'), 'utf8')) as { version?: unknown };
    if (typeof manifest.version === 'string') version = manifest.version;
  } catch {
    // A relocated install without package.json still serves metrics; the version says so.
  }
  return { version, node: process.versions.node };
}
