// The optional drivers of the container image (DRIVERS build argument) and their npm packages.
// Shared by select-drivers.mjs (Dockerfile) and check-image-packages.mjs (test:container).
export const DRIVERS = { postgres: 'pg', mysql: 'mysql2', mssql: 'tedious', sftp: 'ssh2-sftp-client' };

/** `postgres,sftp` / `all` / `none` → the set of driver names; throws naming an unknown one. */
export function parseDrivers(list) {
  const keep = new Set();
  for (const name of list.split(',').map((d) => d.trim().toLowerCase()).filter(Boolean)) {
    if (name === 'all') Object.keys(DRIVERS).forEach((d) => keep.add(d));
    else if (name === 'none') continue;
    else if (name in DRIVERS) keep.add(name);
    else throw new Error(`DRIVERS: unknown driver "${name}" (use ${Object.keys(DRIVERS).join(', ')}, all or none)`);
  }
  return keep;
}
