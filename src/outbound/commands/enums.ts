/** Enumerations of the spec the commands are checked against (§2.6, §2.7, §3.4, §4.4.4). */

export const TYPE_OF_LOAD = ['IMPORT', 'EXPORT', 'ROAD', 'BILL_ONLY'] as const;

/** §2.6: the empty string is an allowed value (and the field is still required on create). */
export const PRE_SET_ORDER_STATUS = [
  'PULL_DELIVER_RETURN',
  'PULL_DROP_DELIVER_DROP_RETURN',
  'PULL_DROP_DELIVER_RETURN',
  'PULL_DELIVER_DROP_RETURN',
  'PULL_RETURN',
  'PICK_RUN_GRAY_POOL',
  'PREPULL_GRAY_POOL',
  'SHUNT_PULL_RETURN',
  'PICK_LIFT_DELIVER_LIFT_RETURN',
  'PICK_LIFT_DELIVER_RETURN',
  '',
] as const;

export const HOLD_VALUES = ['HOLD', 'RELEASED'] as const;
export const ROUTE_TYPES = ['Local', 'Highway'] as const;

/** Main `PUT /load-status/<ref>` accepts only these (§3.4). */
export const MAIN_STATUS_VALUES = ['PENDING', 'AVAILABLE'] as const;

export const ARRIVED_OR_DEPARTED = ['arrived', 'departed'] as const;

/** §2.7: the exact names `POST /loads/document` accepts (not the list endpoint's variants). */
export const UPLOAD_DOCUMENT_TYPES = [
  'Bill of Lading', 'Quote', 'Proof of Delivery', 'Delivery Order', 'TIR - XLS', 'Rate Confirmation', 'TIR IN',
  'TIR OUT', 'TIR Chassis', 'Packing Slip', 'Email', 'Dock Receipt', 'Scale Ticket', '635 Ingate Receipt',
  '635 Outgate Receipt', 'Tolls', 'Other', 'CONTAINER / CHASSIS- IN - PICTURE', 'CONTAINER / CHASSIS -OUT- PICTURE',
  'GENSET PICTURE IN - PICTURE OUT', 'VOID OUT TICKET', 'REVISED 1', 'REVISED 2', 'REVISED 3', 'DEMURRAGE (RECEIPT)',
  'PIER PASS (RECEIPT)', 'TEMPERATURE UNIT', 'DAMAGED CARGO-BOX', 'Haz Mat', 'Lumper Receipt', 'Invoice', 'Rate Con',
  'Detention PICs', 'Seal Import', 'Seal Export', 'Seal Improper', 'Debris Pics', 'Per Diem', 'Booking Confirmation',
] as const;

export const COMMAND_KINDS = ['create', 'update', 'status', 'document'] as const;
export type CommandKind = (typeof COMMAND_KINDS)[number];

/** Long spellings (used by the SQL staging table's documentation) of the same kinds. */
export const KIND_ALIASES: Readonly<Record<string, CommandKind>> = {
  create_load: 'create',
  update_load: 'update',
  change_status: 'status',
  upload_document: 'document',
};
