import { describe, expect, it } from 'vitest';
import { decodeBody, parseJsonBody, parsePiecewise, parseScannedElement, scanListBody } from '../../src/api/json-body.js';
import { sourceJsonOf } from '../../src/api/source-json.js';
import { Prng } from '../../src/simulator/prng.js';
import { fixture } from '../helpers/records.js';

/** What the client did before bodies were parsed piecewise: decode the whole body, JSON.parse it. */
function wholeText(bytes: Buffer): ReturnType<typeof parseJsonBody> {
  const body = decodeBody(bytes);
  if (body.trim() === '') return { ok: false, reason: 'empty body' };
  try {
    return { ok: true, value: JSON.parse(body) as unknown };
  } catch (error) {
    return { ok: false, reason: `body is not valid JSON (${(error as Error).message})` };
  }
}

const TEXTS = ['plain', 'say "hi"', 'back\\slash', 'end\\', '\\"', '[', ']', '{', '}', ',', ':', '"data":[', 'é日本🚚', '\u2028', '\ufeff', '\n\t', ''];

function randomValue(prng: Prng, depth: number): unknown {
  switch (depth > 3 ? prng.int(4) : prng.int(7)) {
    case 0:
      return null;
    case 1:
      return prng.pick([0, -1.5, 1e21, 3, true, false]);
    case 2:
    case 3:
      return Array.from({ length: prng.int(3) + 1 }, () => prng.pick(TEXTS)).join('');
    case 4:
      return Array.from({ length: prng.int(4) }, () => randomValue(prng, depth + 1));
    default: {
      const object: Record<string, unknown> = {};
      for (let i = prng.int(5); i > 0; i--) object[prng.pick(['data', 'a', 'k"q', 'x\\y', '_id', '[', 'other'])] = randomValue(prng, depth + 1);
      return object;
    }
  }
}

/** JSON text with whitespace in random places between tokens (JSON.stringify with a random indent, sometimes none). */
function randomText(prng: Prng, value: unknown): string {
  return JSON.stringify(value, null, prng.pick([0, 0, 1, '\t', ' \r\n'.slice(0, prng.int(3) + 1)]));
}

function randomEnvelope(prng: Prng): unknown {
  const items = Array.from({ length: prng.int(60) }, () => randomValue(prng, 1));
  const envelope: Record<string, unknown> = {};
  if (prng.chance(0.7)) envelope._object = 'list';
  if (prng.chance(0.5)) envelope.other = { pageToken: prng.chance(0.5) ? null : 'tok"en', data: [1, 2] };
  envelope.data = items;
  if (prng.chance(0.5)) envelope.count = items.length;
  if (prng.chance(0.3)) envelope.self = '/loads?x=[1]';
  return envelope;
}

/** Text large enough for the piecewise parse: padded with a long string field. */
function large(text: string, prng: Prng): string {
  const pad = `"pad":"${'x'.repeat(70_000)}",`;
  const at = text.indexOf('{') + 1;
  return prng.chance(0.5) ? `${text.slice(0, at)}${pad}${text.slice(at)}` : `${text.slice(0, at)}${text.slice(at).replace(/}\s*$/, '')}${text.trim().endsWith('{}') ? '' : ','}${pad.slice(0, -1)}}`;
}

describe('API response bodies parsed from bytes', () => {
  it('a list page of loads: the same value as parsing the whole text, in pieces', () => {
    const loads = Array.from({ length: 50 }, (_, i) => ({ ...fixture('load-main'), ...fixture('load-brokerage'), reference_number: `M${i}`, note: 'a "quoted" \\ [text], {x}' }));
    const bytes = Buffer.from(JSON.stringify({ _object: 'list', self: '/loads', version: '1.0.0', count: null, data: loads, other: { pageToken: null } }));
    expect(bytes.length).toBeGreaterThan(64 * 1024);
    expect(parsePiecewise(bytes)).toEqual(JSON.parse(bytes.toString()));
    expect(parseJsonBody(bytes)).toEqual(wholeText(bytes));
  });

  it('elements a peek parsed are taken by the page parse, not parsed again: same values, source JSON noted', () => {
    const loads = Array.from({ length: 50 }, (_, i) => ({ ...fixture('load-main'), reference_number: `M${i}` }));
    const bytes = Buffer.from(JSON.stringify({ _object: 'list', count: 50, data: loads }));
    const scan = scanListBody(bytes)!;
    const peeked = [parseScannedElement(scan, 49), parseScannedElement(scan, 48)];
    // A second look returns the same value, not a new parse.
    expect(parseScannedElement(scan, 49)).toBe(peeked[0]);
    const result = parseJsonBody(bytes, scan);
    expect(result).toEqual(wholeText(bytes));
    const data = (result as { ok: true; value: { data: unknown[] } }).value.data;
    expect(data[49]).toBe(peeked[0]);
    expect(data[48]).toBe(peeked[1]);
    // The reused values carry their text as any other element does (content hash, `_raw`).
    expect(sourceJsonOf(data[49] as object)?.text).toBe(JSON.stringify(loads[49]));
    expect(sourceJsonOf(data[10] as object)?.text).toBe(JSON.stringify(loads[10]));
  });

  it('random envelopes, whitespace, escapes, brackets and quotes in strings: the same value as the whole-text parse', () => {
    const prng = new Prng(14);
    let piecewise = 0;
    for (let round = 0; round < 200; round++) {
      let text = large(randomText(prng, randomEnvelope(prng)), prng);
      if (prng.chance(0.1)) text = `\ufeff${text}`;
      if (prng.chance(0.2)) text = ` \n${text}\r\n `;
      const bytes = Buffer.from(text, 'utf8');
      expect(parseJsonBody(bytes)).toEqual(wholeText(bytes));
      if (parsePiecewise(bytes) !== undefined) piecewise += 1;
    }
    // The split is really used (not always falling back to the whole text).
    expect(piecewise).toBeGreaterThan(170);
  });

  it('invalid or unusual bodies: the same value or the same error as the whole-text parse', () => {
    const pad = 'x'.repeat(70_000);
    const cases = [
      `{"data":[1,2,]}`,
      `{"data":[,1]}`,
      `{"data":[1,,2]}`,
      `{"data":[ ]}`,
      `{"data":[{"a":1]]}`,
      `{"data":[1,2]`,
      `{"data":[1,2]}}`,
      `{"data":[1,2]} x`,
      `{"data":[1],"data":[2]}`,
      `{"d\\u0061ta":[2],"data":[1]}`,
      `{"data":[1],"d\\u0061ta":[2]}`,
      `{"data":{"a":[1]}}`,
      `{"data":"[1,2]"}`,
      `{"x":"\\"data\\":[9]","data":[1]}`,
      `{"data":[1,"2\\\\"],"y":"\\\\"}`,
      `{"data":[1,"a\nb"]}`,
      `{"data":[01]}`,
      `[{"data":[1]}]`,
      `{"nested":{"data":[5]},"data":[6]}`,
      `{"data":[1],"other":[{"data":[3]}]}`,
      `{"data" : [ 1 , 2 ] }`,
      ` `,
      `{"data":[1,2]}\u0000`,
      `{"data":["\u0001"]}`,
      `{"data":["unterminated]}`,
    ];
    for (const body of cases) {
      for (const text of [`${body}${' '.repeat(70_000)}`, body.replace(/^\{/, `{"pad":"${pad}",`), body.replace(/\[/, `["${pad}",`)]) {
        const bytes = Buffer.from(text, 'utf8');
        expect(parseJsonBody(bytes), body).toEqual(wholeText(bytes));
      }
    }
    const invalidUtf8 = Buffer.concat([Buffer.from(`{"data":["${pad}`), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"]}')]);
    expect(parseJsonBody(invalidUtf8)).toEqual(wholeText(invalidUtf8));
  });

  it('small bodies are parsed whole, with the same errors as before', () => {
    expect(parseJsonBody(Buffer.from(''))).toEqual({ ok: false, reason: 'empty body' });
    expect(parseJsonBody(Buffer.from('\ufeff{"data":[1]}'))).toEqual({ ok: true, value: { data: [1] } });
    expect(parseJsonBody(Buffer.from('<html>'))).toEqual(wholeText(Buffer.from('<html>')));
  });
});
