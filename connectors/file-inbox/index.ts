/** The file inbox shared by the local `inbox` connector and the `sftp` connector's source side. */
export { InboxSource, unitId, fileNameOf, type InboxSourceDeps } from './inbox-source.js';
export { inboxShape, inboxOptionsSchema, inboxFolders, type InboxOptions, type InboxFolders } from './inbox-options.js';
export { parseCsvRequests, parseJsonRequests, formatOf } from './parse-requests.js';
export { scanCsvRecords } from './csv-records.js';
export { RESULT_COLUMNS, RESULT_SUFFIX, ERRORS_SUFFIX, DRY_RUN_COLUMNS, DRY_RUN_SUFFIX } from './result-files.js';
export { InboxError, isInboxError } from './errors.js';
