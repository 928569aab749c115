import { KeyedMutex } from '../util/keyed-mutex.js';

const deliveryLocks = new WeakMap<object, KeyedMutex>();

/**
 * Runs `work` alone among the deliveries of one stream (per state database, identified by its
 * stores). Polling, webhook refreshes and quarantine re-deliveries of one stream may run at the
 * same time; between the content-hash check and its commit two of them would both see a record
 * as new and write it twice.
 */
export function withStreamDelivery<T>(stores: object, stream: string, work: () => Promise<T>): Promise<T> {
  let mutex = deliveryLocks.get(stores);
  if (!mutex) deliveryLocks.set(stores, (mutex = new KeyedMutex()));
  return mutex.run(stream, work);
}
