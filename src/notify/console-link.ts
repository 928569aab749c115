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
