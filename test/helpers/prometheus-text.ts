/**
 * A strict parser of the Prometheus text exposition format (0.0.4), enough to prove `/metrics` is
 * well-formed: HELP/TYPE lines, samples `name{label="value",…} value [timestamp]`, label escaping,
 * each sample belonging to a declared family. Throws naming the bad line.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: string;
  help: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const SUFFIXES = ['_bucket', '_sum', '_count', '_total', '_created'];

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const lines = text.split('\n');
  lines.forEach((line, index) => {
    const at = `line ${index + 1}: ${line}`;
    if (line === '') return;
    if (line.startsWith('# HELP ') || line.startsWith('# TYPE ')) {
      const [, kind, name, ...rest] = line.split(' ');
      if (!name || !NAME.test(name)) throw new Error(`bad metric name in ${at}`);
      const family = families.get(name) ?? { name, type: 'untyped', help: '', samples: [] };
      if (kind === 'TYPE') {
        const type = rest.join(' ');
        if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(type)) throw new Error(`bad type in ${at}`);
        family.type = type;
      } else family.help = rest.join(' ');
      families.set(name, family);
      return;
    }
    if (line.startsWith('#')) return;
    const sample = parseSample(line, at);
    const family = families.get(sample.name) ?? families.get(SUFFIXES.reduce((n, s) => (n.endsWith(s) && families.has(n.slice(0, -s.length)) ? n.slice(0, -s.length) : n), sample.name));
    if (!family) throw new Error(`sample without a declared family in ${at}`);
    family.samples.push(sample);
  });
  return families;
}

function parseSample(line: string, at: string): Sample {
  const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(\s+-?\d+)?$/.exec(line);
  if (!match) throw new Error(`bad sample in ${at}`);
  const labels: Record<string, string> = {};
  const body = match[3] ?? '';
  let rest = body;
  while (rest.length > 0) {
    const label = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\["\\n])*)"(,|$)/.exec(rest);
    if (!label) throw new Error(`bad labels in ${at}`);
    labels[label[1]!] = label[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    rest = rest.slice(label[0].length);
  }
  const raw = match[4]!;
  const value = raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : raw === 'NaN' ? Number.NaN : Number(raw);
  if (Number.isNaN(value) && raw !== 'NaN') throw new Error(`bad value in ${at}`);
  return { name: match[1]!, labels, value };
}
