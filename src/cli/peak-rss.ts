import { readFileSync } from 'node:fs';

/**
 * This process's peak resident set in KiB, for the benchmarks' `peak-rss-kib` line. On Linux the
 * memory map's own high-water mark (`VmHWM` in /proc/self/status): `resourceUsage().maxRSS` can
 * carry a figure over from the parent that spawned the process (a full `npm run bench` reported
 * 107 MiB for `--help` and for bare node alike, after sections that had grown the bench process),
 * while VmHWM starts again with the program. Elsewhere, maxRSS.
 */
export function peakRssKib(): number {
  try {
    const match = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (match) return Number(match[1]);
  } catch {
    // No procfs: the portable figure below.
  }
  return process.resourceUsage().maxRSS;
}
