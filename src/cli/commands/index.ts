import type { RegisterCommand } from '../command-context.js';
import { register as backfill } from './backfill.js';
import { register as check } from './check.js';
import { register as demo } from './demo.js';
import { register as discover } from './discover.js';
import { register as outbox } from './outbox.js';
import { register as push } from './push.js';
import { register as rejected } from './rejected.js';
import { register as reconcile } from './reconcile.js';
import { register as reset } from './reset.js';
import { register as schema } from './schema.js';
import { register as run } from './run.js';
import { register as simulate } from './simulate.js';
import { register as sink } from './sink.js';
import { register as state } from './state.js';
import { register as status } from './status.js';
import { register as sync } from './sync.js';
import { register as validateConfig } from './validate-config.js';

/**
 * Every command of the CLI, in the order `--help` lists them. A command is added here only when
 * it works end to end.
 */
export const commandModules: RegisterCommand[] = [
  run,
  sync,
  backfill,
  reconcile,
  push,
  outbox,
  rejected,
  status,
  reset,
  state,
  sink,
  validateConfig,
  check,
  discover,
  schema,
  simulate,
  demo,
];
