import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { ChaosVariant } from './chaos-options.js';

export const STAGING_TABLE = 'freight_outbound_requests';

/** API ids of the parties every create names (ids, so no dependence on the customer directory's fill order). */
export interface Parties {
  caller: string;
  shipper: string;
  consignee: string;
}

export interface SentCreate {
  key: string;
  via: 'inbox' | 'staging';
  /** Inbox: the file and the line the request is on (the result file's `ref`). */
  file?: string;
  line?: number;
}

const HEADER = ['erp_key', 'kind', 'type_of_load', 'preSetOrderStatus', 'caller', 'shipper', 'consignee'];

/**
 * Feeds outbound creates during the chaos run: request files dropped into the inbox folder (written
 * as `.part` and renamed, as an ERP should) and rows inserted into the SQL staging table. Every
 * ERP key is remembered so the end of the run can check it exists exactly once on the server.
 */
export class OutboundFeed {
  readonly sent: SentCreate[] = [];
  private files = 0;
  private inboxLeft: number;
  private stagingLeft: number;
  private stagingQueue = 0;
  private nextKey = 1;

  constructor(
    private readonly options: { inboxDir: string; sqliteFile?: string; seed: number; variant: ChaosVariant; parties: Parties; inbox: number; staging: number },
  ) {
    this.inboxLeft = options.inbox;
    this.stagingLeft = options.sqliteFile ? options.staging : 0;
  }

  private key(via: 'I' | 'S'): string {
    return `CHX${this.options.seed}${via}${String(this.nextKey++).padStart(5, '0')}`;
  }

  /** Drops one inbox file with up to `count` creates. */
  dropInboxFile(count: number): void {
    const n = Math.min(count, this.inboxLeft);
    if (n <= 0) return;
    this.inboxLeft -= n;
    const name = `orders-${String(++this.files).padStart(3, '0')}.csv`;
    const { caller, shipper, consignee } = this.options.parties;
    const lines = [HEADER.join(',')];
    for (let i = 0; i < n; i++) {
      const key = this.key('I');
      // Line numbers are 1-based and the header is line 1.
      this.sent.push({ key, via: 'inbox', file: name, line: lines.length + 1 });
      lines.push([key, 'create', 'IMPORT', 'PULL_RETURN', caller, shipper, consignee].join(','));
    }
    fs.mkdirSync(this.options.inboxDir, { recursive: true });
    const file = path.join(this.options.inboxDir, name);
    fs.writeFileSync(`${file}.part`, `${lines.join('\r\n')}\r\n`);
    fs.renameSync(`${file}.part`, file);
  }

  /** Queues `count` staging creates; they are inserted once the daemon has created the table. */
  queueStaging(count: number): void {
    const n = Math.min(count, this.stagingLeft);
    this.stagingLeft -= n;
    this.stagingQueue += n;
    this.flushStaging();
  }

  /** Inserts queued staging rows, if the staging table exists yet. */
  flushStaging(): void {
    const file = this.options.sqliteFile;
    if (!file || this.stagingQueue === 0 || !fs.existsSync(file)) return;
    const db = new Database(file);
    try {
      db.pragma('busy_timeout = 5000');
      const exists = db.prepare("select 1 from sqlite_master where type = 'table' and name = ?").get(STAGING_TABLE);
      if (!exists) return;
      const { caller, shipper, consignee } = this.options.parties;
      const insert = db.prepare(`insert into ${STAGING_TABLE} (erp_key, kind, payload) values (?, ?, ?)`);
      db.transaction(() => {
        for (; this.stagingQueue > 0; this.stagingQueue--) {
          const key = this.key('S');
          this.sent.push({ key, via: 'staging' });
          insert.run(key, 'create_load', JSON.stringify({ type_of_load: 'IMPORT', preSetOrderStatus: 'PULL_RETURN', caller, shipper: [shipper], consignee: [consignee] }));
        }
      })();
    } finally {
      db.close();
    }
  }

  /** Everything not sent yet, now (before the final pass). */
  flushAll(): void {
    this.dropInboxFile(this.inboxLeft);
    this.queueStaging(this.stagingLeft);
  }

  get pendingStaging(): number {
    return this.stagingQueue;
  }
}
