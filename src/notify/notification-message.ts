import type { Condition, ConditionKind } from './conditions.js';
import { CONSOLE_PAGES, consoleLink, pageOfCondition } from './console-link.js';
import type { AnnouncedCondition } from './transitions.js';

export type NotificationEvent = 'opened' | 'recovered' | 'summary';

export interface NotificationItem {
  event: 'opened' | 'recovered';
  kind: string;
  subject: string;
  summary: string;
  link: string;
}

/** One message as every channel sends it (JSON body, Slack text, e-mail). */
export interface NotificationMessage {
  event: NotificationEvent;
  title: string;
  items: NotificationItem[];
  /** The console page to open (the items' common page, else the overview). */
  link: string;
  at: string;
}

const KIND_TITLES: Record<ConditionKind, string> = {
  'stream-failing': 'Stream failing',
  'stream-lagging': 'Stream lagging',
  'auth-lost': 'Authentication lost',
  'dead-letter': 'Outbound dead letter',
  'rejected-records': 'Records rejected',
  'reconcile-differences': 'Reconcile differences',
};

function kindTitle(kind: string): string {
  return KIND_TITLES[kind as ConditionKind] ?? kind;
}

/**
 * The messages of one evaluation: one per kind and direction, so three streams failing together
 * are one message listing the three, not three messages.
 */
export function buildMessages(
  change: { opened: readonly Condition[]; recovered: readonly AnnouncedCondition[] },
  baseUrl: string,
  at: Date,
): NotificationMessage[] {
  const items: NotificationItem[] = [
    ...change.opened.map((c): NotificationItem => ({ event: 'opened', kind: c.kind, subject: c.subject, summary: c.summary, link: consoleLink(baseUrl, pageOfCondition(c.kind, c.subject)) })),
    ...change.recovered.map(
      (r): NotificationItem => ({ event: 'recovered', kind: r.kind, subject: r.subject, summary: `recovered: ${r.summary}`, link: consoleLink(baseUrl, pageOfCondition(r.kind, r.subject)) }),
    ),
  ];
  const groups = new Map<string, NotificationItem[]>();
  for (const item of items) {
    const group = `${item.event}|${item.kind}`;
    groups.set(group, [...(groups.get(group) ?? []), item]);
  }
  return [...groups.values()].map((group) => {
    const first = group[0]!;
    const what = group.length === 1 ? `${kindTitle(first.kind)}: ${first.subject}` : `${kindTitle(first.kind)} (${group.length})`;
    return {
      event: first.event,
      title: first.event === 'recovered' ? `Recovered: ${what}` : what,
      items: group,
      link: commonLink(group, baseUrl),
      at: at.toISOString(),
    };
  });
}

/** One message standing for messages the rate limit held back: nothing is dropped silently. */
export function summaryMessage(held: readonly NotificationMessage[], baseUrl: string, at: Date): NotificationMessage {
  const items = held.flatMap((m) => m.items);
  return {
    event: 'summary',
    title: `${held.length} notification(s) held back by the rate limit: ${held.map((m) => m.title).join('; ')}`.slice(0, 240),
    items,
    link: commonLink(items, baseUrl),
    at: at.toISOString(),
  };
}

/** Plain text of a message (e-mail body, Slack fallback text, log line). */
export function messageText(message: NotificationMessage): string {
  const lines = message.items.map((item) => `- ${item.summary}\n  ${item.link}`);
  return [message.title, '', ...lines, '', `Console: ${message.link}`].join('\n');
}

function commonLink(items: readonly NotificationItem[], baseUrl: string): string {
  const links = new Set(items.map((i) => i.link));
  return links.size === 1 ? [...links][0]! : consoleLink(baseUrl, CONSOLE_PAGES.overview);
}
