/**
 * Links into the web console (`/console/…` on the ops port): `http.console.publicUrl` when the
 * console is reached through a proxy or a public name, else `http://<http.listen>`.
 */
export function consoleBaseUrl(options: { listen: string; publicUrl?: string | undefined }): string {
  const base = options.publicUrl ?? `http://${options.listen}`;
  return base.replace(/\/+$/, '');
}

export function consoleLink(baseUrl: string, page: string): string {
  return `${baseUrl}/console/${page.replace(/^\/+/, '')}`;
}

/** The console page of each subject (paths agreed with the console: README "Web console"). */
export const CONSOLE_PAGES = {
  overview: '',
  stream: (stream: string) => `streams/${encodeURIComponent(stream)}`,
  outbox: 'outbox',
  rejected: 'rejected',
  webhooks: 'webhooks',
  runs: 'runs',
} as const;

/** The console page that shows a condition, from its kind and subject (a stream, an outbox id, `<stream>/<kind>`…). */
export function pageOfCondition(kind: string, subject: string): string {
  switch (kind) {
    case 'stream-failing':
    case 'stream-lagging':
      return CONSOLE_PAGES.stream(subject);
    case 'reconcile-differences':
      return CONSOLE_PAGES.stream(subject.split('/')[0] ?? subject);
    case 'dead-letter':
      return CONSOLE_PAGES.outbox;
    case 'rejected-records':
      return subject.endsWith('/webhook') ? CONSOLE_PAGES.webhooks : CONSOLE_PAGES.rejected;
    default:
      return CONSOLE_PAGES.overview;
  }
}
