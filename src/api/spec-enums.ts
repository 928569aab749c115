/**
 * Enumerations of the spec (§2.6, §2.7, §3.4, §4.4.4): the single copy. Outbound checks commands
 * against them and the simulator (src/simulator) validates request bodies and generates data
 * with them, so the two cannot drift apart. They live in the API layer because they are the
 * API's contract; the simulator may import production modules, never the reverse.
 *
 * `preSetOrderStatus` (decision, checked against spec §2.6, §4.4.1, §4.4.2): it is required on
 * create (the empty string included, §4.4.1) and also an optional update field (§4.4.2 lists it
 * among the update strings). Both the simulator and outbound were right to accept it on update;
 * the simulator's only difference was listing it with the free strings, and both sides check the
 * value against PRE_SET_ORDER_STATUS below, on create and on update alike.
 */

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

