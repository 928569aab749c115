/** Outbound's own vocabulary; the spec's enumerations are in src/api/spec-enums.ts. */

export const COMMAND_KINDS = ['create', 'update', 'status', 'document'] as const;
export type CommandKind = (typeof COMMAND_KINDS)[number];

/** Long spellings (used by the SQL staging table's documentation) of the same kinds. */
export const KIND_ALIASES: Readonly<Record<string, CommandKind>> = {
  create_load: 'create',
  update_load: 'update',
  change_status: 'status',
  upload_document: 'document',
};
