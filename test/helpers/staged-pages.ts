import fs from 'node:fs';
import { LocalTarget } from '../../connectors/file-drop/local-target.js';
import { scanPageLog } from '../../connectors/file-drop/page-log-scan.js';

/** Pages acknowledged into a CSV drop's staging folder and not yet published: frames of its page logs, and page files. */
export async function stagedPageCount(stagingDir: string): Promise<number> {
  if (!fs.existsSync(stagingDir)) return 0;
  let pages = 0;
  for (const name of fs.readdirSync(stagingDir)) {
    if (name.endsWith('.page')) pages += 1;
    else if (name.endsWith('.pages')) pages += (await scanPageLog(new LocalTarget(), stagingDir, name).catch(() => ({ pages: [] }))).pages.length;
  }
  return pages;
}
