import { afterAll } from 'vitest';
import { disposePostgresStates } from '../helpers/state-db.js';

// The state-on-postgres project: drop the schemas the file's tests created (test/helpers/state-db.ts).
afterAll(async () => {
  await disposePostgresStates();
});
