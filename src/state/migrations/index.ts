import type { Migration, MigrationProvider } from 'kysely';
import { initial } from './0001-initial.js';
import { syncSideTables } from './0002-sync-side-tables.js';
import { outbox } from './0003-outbox.js';
import { webhookInbox } from './0004-webhook-inbox.js';
import { quarantine } from './0005-quarantine.js';
import { invoiceLinks } from './0006-invoice-links.js';
import { tokenRefreshLock } from './0007-token-refresh-lock.js';
import { documentFiles } from './0008-document-files.js';
import { daemonOwner } from './0009-daemon-owner.js';
import { notifications } from './0010-notifications.js';
import { runLag } from './0011-run-lag.js';
import { feedLoadSignature } from './0012-feed-load-signature.js';
import { accountLeases } from './0013-account-leases.js';
import { tokenReauth } from './0014-token-reauth.js';
import { leaseHandOverRequests } from './0015-lease-hand-over-requests.js';
import { webhookInboxArmCount } from './0016-webhook-inbox-arm-count.js';

/**
 * Every migration, by name; names sort in the order they run. Listed in code rather than
 * discovered on disk so the compiled daemon (dist/) finds them wherever it is installed.
 * Add new ones at the end with the next number.
 */
export const MIGRATIONS: Readonly<Record<string, Migration>> = {
  '0001-initial': initial,
  '0002-sync-side-tables': syncSideTables,
  '0003-outbox': outbox,
  '0004-webhook-inbox': webhookInbox,
  '0005-quarantine': quarantine,
  '0006-invoice-links': invoiceLinks,
  '0007-token-refresh-lock': tokenRefreshLock,
  '0008-document-files': documentFiles,
  '0009-daemon-owner': daemonOwner,
  '0010-notifications': notifications,
  '0011-run-lag': runLag,
  '0012-feed-load-signature': feedLoadSignature,
  '0013-account-leases': accountLeases,
  '0014-token-reauth': tokenReauth,
  '0015-lease-hand-over-requests': leaseHandOverRequests,
  '0016-webhook-inbox-arm-count': webhookInboxArmCount,
};

export class StaticMigrationProvider implements MigrationProvider {
  constructor(private readonly migrations: Readonly<Record<string, Migration>> = MIGRATIONS) {}

  async getMigrations(): Promise<Record<string, Migration>> {
    return { ...this.migrations };
  }
}
