/**
 * Column kinds live in the contracts (src/contracts/column-kinds.ts) since `freight-sync discover`
 * shows them too: one derivation, so discover never describes a type the SQL sink does not create.
 */
export { BOOLEAN, columnKind, INTEGER, JSON_DOCUMENT, LONG_TEXT, TEXT, TIMESTAMP, type ColumnKind } from '../../src/contracts/index.js';
