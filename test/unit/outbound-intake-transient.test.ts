import { describe, expect, it } from 'vitest';
import { Intake } from '../../src/outbound/intake.js';
import { MemorySource } from '../../src/outbound/memory-source.js';
import type { StateStores } from '../../src/state/stores/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { createRequest as create, freshStoresPerTest } from '../helpers/outbound-fixtures.js';

const state = freshStoresPerTest();

/** The stores, with the customer directory failing its next call the way a dropped database connection does. */
function flakyDirectory(error: Error): { stores: StateStores; failures: () => number } {
  let failures = 0;
  let armed = true;
  const { stores } = state;
  const directory = new Proxy(stores.directory, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (armed) {
          armed = false;
          failures += 1;
          throw error;
        }
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { stores: { ...stores, directory }, failures: () => failures };
}

describe('outbound intake: a state-store failure while resolving a request is not the request\'s fault', () => {
  // node-postgres raises these without a `code` (cluster chaos, pg_terminate_backend): an ERP
  // create was written back as failed "could not read the request: Connection terminated
  // unexpectedly" and never made.
  it.each([
    ['pg, connection terminated (no code)', Object.assign(new Error('Connection terminated unexpectedly'), {})],
    ['pg, client has encountered a connection error (no code)', new Error('Client has encountered a connection error and is not queryable')],
    ['a system error (code)', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })],
  ])('%s: the unit is left for the next poll, nothing is rejected; the next take stores the create', async (_label, error) => {
    const flaky = flakyDirectory(error);
    const intake = new Intake({ stores: flaky.stores, variant: 'main', logger: silentLogger() });
    const source = new MemorySource();
    source.add('u1', [create('SO-1')]);

    await expect(intake.takeFrom({ name: 'mem', source }, new AbortController().signal)).rejects.toBe(error);
    expect(flaky.failures()).toBe(1);
    expect(source.acceptedIds.size).toBe(0);
    expect(await state.stores.units.find('mem', 'u1')).toBeUndefined();

    const taken = await intake.takeFrom({ name: 'mem', source }, new AbortController().signal);
    expect(taken).toMatchObject([{ unitId: 'u1', commands: 1, invalid: 0 }]);
    expect(await state.stores.outbox.latest('SO-1', 'create')).toMatchObject({ erp_key: 'SO-1', kind: 'create' });
  });
});
