/**
 * A value kept on an object for as long as the object lives: a WeakMap's job, done with a
 * property under a private symbol (non-enumerable, so `JSON.stringify`, `Object.keys`, `for…in`,
 * spread and `structuredClone` never see it or copy it; the object's own JSON is unchanged).
 *
 * Why not a WeakMap: the texts of the records of a page were kept in WeakMaps keyed by the
 * records, and V8 let those values outlive their keys in the young generation. Allocation sampling
 * of a CSV backfill (`cpu-per-page.js 20000 csv-default`, objects collected by scavenges left out)
 * found 223 KB per 50-load page moved to the old generation, 132 KB of it the records' texts; with
 * the texts on the records, 50 KB. Every byte moved there is marked again by the next full
 * collection, which ran about three times as often.
 *
 * An object that cannot take a property (frozen, sealed, not extensible) keeps its value in a
 * WeakMap, as before.
 */
export class ObjectSlot<T> {
  private readonly key: symbol;
  private readonly fallback = new WeakMap<object, T>();
  private fallbackUsed = false;

  constructor(description: string) {
    this.key = Symbol(description);
  }

  get(target: object): T | undefined {
    // The fallback first: an object frozen after its slot was set keeps the old property, which
    // a later value (in the fallback) must override. Only looked at once the fallback holds anything.
    if (this.fallbackUsed && this.fallback.has(target)) return this.fallback.get(target);
    return (target as Record<symbol, T | undefined>)[this.key];
  }

  set(target: object, value: T): void {
    if (Object.isExtensible(target)) {
      Object.defineProperty(target, this.key, { value, writable: true, configurable: true, enumerable: false });
    } else {
      this.fallbackUsed = true;
      this.fallback.set(target, value);
    }
  }
}
