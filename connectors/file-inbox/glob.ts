/** `*` and `?` file-name globs (no path separators, no character classes): enough for `*.csv`. */
export function globToRegExp(pattern: string | readonly string[]): RegExp {
  const patterns = typeof pattern === 'string' ? [pattern] : pattern;
  const bodies = patterns.map((p) => p.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]'));
  return new RegExp(`^(?:${bodies.join('|')})$`);
}

/** Names a writer uses while a file is still being written; never read as requests. */
const PARTIAL = /(^\.|^~|\.(tmp|part|partial|filepart|crdownload|swp)$)/i;

export function isPartialName(name: string): boolean {
  return PARTIAL.test(name);
}
