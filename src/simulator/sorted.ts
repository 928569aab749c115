/** Binary-search helpers shared by the overlay indexes and the lazily generated base data. */

/** Smallest i in [lo, hi) with pred(i) true, or hi; pred must be monotonic (false… then true…). */
export function lowerBound(lo: number, hi: number, pred: (i: number) => boolean): number {
  let a = lo;
  let b = hi;
  while (a < b) {
    const mid = a + Math.floor((b - a) / 2);
    if (pred(mid)) b = mid;
    else a = mid + 1;
  }
  return a;
}

/** First index in a sorted number array whose value is >= value. */
export function lowerBoundNum(array: ArrayLike<number>, value: number): number {
  return lowerBound(0, array.length, (i) => (array[i] as number) >= value);
}

/** Inserts into a sorted number array unless present. Returns false when already present. */
export function insertSortedNum(array: number[], value: number): boolean {
  const at = lowerBoundNum(array, value);
  if (array[at] === value) return false;
  array.splice(at, 0, value);
  return true;
}

export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
