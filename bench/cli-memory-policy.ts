import { applyMemoryPolicy } from '../src/cli/memory-policy.js';
import { raiseInterruptBudget } from '../src/cli/tier-up-budget.js';

/**
 * Imported first by benchmarks that run the product in their own process: ES modules run in
 * import order, so the CLI's heap settings apply before the product's modules load, as in
 * `freight-sync` (src/cli/bin.ts), and so does its interrupt budget (tier-up-budget.ts).
 * `FREIGHT_SYNC_SEMI_SPACE_MIB`, `FREIGHT_SYNC_HEAP_GROWING_PERCENT` and
 * `FREIGHT_SYNC_INTERRUPT_BUDGET_KIB` change them as they do for the CLI.
 */
export const benchMemoryPolicy = { ...applyMemoryPolicy(), interruptBudgetKiB: raiseInterruptBudget() };
