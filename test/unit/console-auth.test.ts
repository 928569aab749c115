import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/parse-config.js';
import { challenges, isAuthorized } from '../../src/ops/console/console-auth.js';
import { CsrfGuard } from '../../src/ops/console/csrf.js';
import { escapeHtml, html } from '../../src/ops/console/html.js';
import { minimalRaw } from '../helpers/config-fixtures.js';

function request(headers: Record<string, string>): IncomingMessage {
  return { headers } as unknown as IncomingMessage;
}

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('console authentication', () => {
  const bearer = { bearerToken: 'tok-4b1e9c' };

  it('accepts the bearer token as a header, or as the password of a browser login (any user)', () => {
    expect(isAuthorized(request({ authorization: 'Bearer tok-4b1e9c' }), bearer)).toBe(true);
    expect(isAuthorized(request({ authorization: basic('anyone', 'tok-4b1e9c') }), bearer)).toBe(true);
    for (const authorization of ['Bearer tok-4b1e9', 'Bearer tok-4b1e9c0', 'bearer', basic('tok-4b1e9c', 'x'), '']) {
      expect(isAuthorized(request({ authorization }), bearer), authorization).toBe(false);
    }
    expect(isAuthorized(request({}), bearer)).toBe(false);
    expect(challenges(bearer)).toEqual(['Bearer realm="freight-sync console"', 'Basic realm="freight-sync console", charset="UTF-8"']);
  });

  it('basic auth needs both the user name and the password, and never takes a bearer header', () => {
    const auth = { basic: { username: 'ops', password: 'pw:with:colons' } };
    expect(isAuthorized(request({ authorization: basic('ops', 'pw:with:colons') }), auth)).toBe(true);
    expect(isAuthorized(request({ authorization: basic('ops', 'pw:with') }), auth)).toBe(false);
    expect(isAuthorized(request({ authorization: basic('Ops', 'pw:with:colons') }), auth)).toBe(false);
    expect(isAuthorized(request({ authorization: 'Bearer pw:with:colons' }), auth)).toBe(false);
  });
});

describe('console CSRF guard', () => {
  const guard = new CsrfGuard('https://sync.example.com', Buffer.alloc(32, 7));
  const session = { authorization: basic('ops', 'pw'), host: '10.0.0.5:9090' };

  it('ties the token to the session: another credential gets another token', () => {
    const token = guard.tokenFor(request(session));
    expect(guard.refusal(request(session), token)).toBeNull();
    const other = { ...session, authorization: basic('ops', 'other') };
    expect(guard.refusal(request(other), token)).toMatch(/token is not valid/);
    expect(new CsrfGuard(undefined).refusal(request(session), token)).toMatch(/token is not valid/);
  });

  it('accepts its own origin and the public URL; refuses other origins and cross-site fetches', () => {
    const token = guard.tokenFor(request(session));
    expect(guard.refusal(request({ ...session, origin: 'http://10.0.0.5:9090', 'sec-fetch-site': 'same-origin' }), token)).toBeNull();
    expect(guard.refusal(request({ ...session, origin: 'https://sync.example.com' }), token)).toBeNull();
    expect(guard.refusal(request({ ...session, origin: 'https://sync.example.com.evil.io' }), token)).toMatch(/another origin/);
    expect(guard.refusal(request({ ...session, origin: 'http://10.0.0.5:9091' }), token)).toMatch(/another origin/);
    expect(guard.refusal(request({ ...session, 'sec-fetch-site': 'same-site' }), token)).toMatch(/Sec-Fetch-Site: same-site/);
    expect(guard.refusal(request(session), undefined)).toMatch(/token is missing/);
  });
});

describe('console HTML', () => {
  it('escapes every interpolated value, but not nested html', () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&\``)).toBe('&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&#96;');
    const inner = html`<b>${'<i>'}</b>`;
    expect(html`<p title="${'"><script>'}">${inner}${['<x>', 1]}</p>`.text).toBe('<p title="&quot;&gt;&lt;script&gt;"><b>&lt;i&gt;</b>&lt;x&gt;1</p>');
  });
});

describe('http.console config', () => {
  const withConsole = (console: unknown) => ({ ...minimalRaw(), http: { console } });

  it('is off by default and needs exactly one kind of auth when on', () => {
    expect(parseConfig(minimalRaw()).http.console).toEqual({ enabled: false });
    expect(() => parseConfig({ ...minimalRaw(), http: { enabled: false, console: { enabled: true, auth: { bearerToken: 't' } } } })).toThrow(/http\.console\.enabled: needs http\.enabled/);
    expect(() => parseConfig(withConsole({ enabled: true }))).toThrow(/http\.console\.auth.*required when the console is enabled/s);
    expect(() => parseConfig(withConsole({ enabled: true, auth: { bearerToken: 't', basic: { username: 'u', password: 'p' } } }))).toThrow(/either bearerToken or basic/);
    expect(() => parseConfig(withConsole({ enabled: true, auth: { basic: { username: 'u' } } }))).toThrow(/http\.console\.auth\.basic\.password/);
    expect(() => parseConfig(withConsole({ enabled: true, auth: { bearerToken: 't' }, publicUrl: 'sync.example.com' }))).toThrow(/http\.console\.publicUrl/);
    expect(parseConfig(withConsole({ enabled: 'true', auth: { bearerToken: 't' }, publicUrl: 'https://sync.example.com/' })).http.console).toEqual({
      enabled: true,
      auth: { bearerToken: 't' },
      publicUrl: 'https://sync.example.com',
    });
  });
});
