#!/usr/bin/env node
// Used by scripts/test-container.sh: checks the packages found in the image's /app/node_modules
// (one `node_modules/...` path per line in the file given) against package-lock.json: each one must
// be a production package of the lockfile (no dev-only package, nothing unknown), the main dev
// tools are asserted absent by name, and each optional driver is present exactly when
// the image's DRIVERS label selects it.
// Usage: node scripts/check-image-packages.mjs <paths-file> <drivers-label>
import fs from 'node:fs';
import { DRIVERS, parseDrivers } from './image-drivers.mjs';

const [listFile, driversLabel = ''] = process.argv.slice(2);
const installed = fs.readFileSync(listFile, 'utf8').split('\n').map((l) => l.trim()).filter(Boolean);
const lock = JSON.parse(fs.readFileSync('package-lock.json', 'utf8'));
const manifest = JSON.parse(fs.readFileSync('package.json', 'utf8'));
const problems = [];

const devOnly = Object.entries(lock.packages).filter(([p, e]) => p !== '' && e.dev === true).map(([p]) => p);
for (const p of installed) {
  const entry = lock.packages[p];
  if (!entry) problems.push(`${p}: not in package-lock.json`);
  else if (entry.dev === true) problems.push(`${p}: a dev-only package`);
}
// Named as well, in case the lockfile's dev flags were ever wrong. (Not every devDependency: a
// devDependency that a production package also needs, e.g. @types/node as mysql2's peer, is in.)
for (const name of ['typescript', 'vitest', 'nock', 'dependency-cruiser']) {
  if (!(name in (manifest.devDependencies ?? {}))) problems.push(`${name}: no longer a devDependency; update this list`);
  if (installed.includes(`node_modules/${name}`)) problems.push(`node_modules/${name}: a dev tool`);
}

const selected = parseDrivers(driversLabel);
for (const [driver, pkg] of Object.entries(DRIVERS)) {
  const want = selected.has(driver);
  const has = installed.includes(`node_modules/${pkg}`);
  if (want !== has) problems.push(`driver ${driver} (${pkg}): ${has ? 'present although DRIVERS leaves it out' : 'missing although DRIVERS selects it'}`);
}
if (!selected.has('mssql') && installed.some((p) => p.startsWith('node_modules/@azure/'))) {
  problems.push('node_modules/@azure/*: present without the mssql driver');
}

if (problems.length > 0) {
  console.error(`image node_modules:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(
  `image node_modules: ${installed.length} packages, all production packages of package-lock.json; ` +
    `none of its ${devOnly.length} dev-only packages; drivers: ${driversLabel || 'none'}`,
);
