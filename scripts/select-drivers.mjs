#!/usr/bin/env node
// Used by the Dockerfile (prod-deps stage): removes from ./package.json the optional drivers that
// the DRIVERS build argument leaves out, so that the following `npm prune` deletes them and the
// dependencies only they use (tedious alone brings ~51 MB of @azure/*). freight-sync loads these
// drivers only when a connector of their kind is configured, and names the package when one is absent.
// Usage: node scripts/select-drivers.mjs postgres,mysql,sftp   (or `all`, or `none`)
import fs from 'node:fs';
import { DRIVERS, parseDrivers } from './image-drivers.mjs';

let keep;
try {
  keep = parseDrivers(process.argv[2] ?? '');
} catch (error) {
  console.error(error.message);
  process.exit(2);
}

const manifest = JSON.parse(fs.readFileSync('package.json', 'utf8'));
for (const [driver, pkg] of Object.entries(DRIVERS)) {
  if (keep.has(driver)) continue;
  if (!manifest.dependencies?.[pkg]) {
    console.error(`DRIVERS: package.json has no dependency "${pkg}" (driver ${driver}): update scripts/image-drivers.mjs`);
    process.exit(2);
  }
  delete manifest.dependencies[pkg];
}
fs.writeFileSync('package.json', `${JSON.stringify(manifest, null, 2)}\n`);
const kept = [...keep].map((d) => `${d} (${DRIVERS[d]})`).join(', ') || 'none';
console.log(`drivers in the image: ${kept}`);
