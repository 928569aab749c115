/** Consecutive slices of at most `size` items (statements with bounded parameter lists). */
export function* chunks<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}
