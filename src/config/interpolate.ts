import { formatPath } from './format-issues.js';

/**
 * `${VAR}` and `${VAR:-default}` in string values of the parsed YAML. Runs after parsing, so keys
 * and comments are never touched and a value containing `#` or `:` cannot change the document's
 * structure. `$${` is a literal `${`. As in the shell, `:-` also applies when VAR is set but empty.
 *
 * The result is always a string: numbers and booleans written as `${VAR}` are accepted by the
 * schema's numeric/boolean helpers, while secrets made of digits stay strings.
 */
export type Environment = Readonly<Record<string, string | undefined>>;

export interface InterpolationResult {
  value: unknown;
  /** One line per problem, each starting with the dotted path of the value. */
  issues: string[];
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function interpolateConfig(root: unknown, env: Environment): InterpolationResult {
  const issues: string[] = [];
  const value = walk(root, [], env, issues);
  return { value, issues };
}

function walk(node: unknown, path: (string | number)[], env: Environment, issues: string[]): unknown {
  if (typeof node === 'string') return interpolateString(node, env, formatPath(path), issues);
  if (Array.isArray(node)) return node.map((item, index) => walk(item, [...path, index], env, issues));
  if (node !== null && typeof node === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(node)) out[key] = walk(child, [...path, key], env, issues);
    return out;
  }
  return node;
}

/** Replaces every reference in one string value; problems are pushed to `issues`. */
export function interpolateString(text: string, env: Environment, where: string, issues: string[]): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    if (text.startsWith('$${', i)) {
      out += '${';
      i += 3;
      continue;
    }
    if (!text.startsWith('${', i)) {
      out += text[i];
      i += 1;
      continue;
    }
    const close = text.indexOf('}', i + 2);
    if (close === -1) {
      issues.push(`${where}: unclosed "\${" (write "$\${" for a literal "\${")`);
      return text;
    }
    const body = text.slice(i + 2, close);
    const separator = body.indexOf(':-');
    const name = separator === -1 ? body : body.slice(0, separator);
    const fallback = separator === -1 ? undefined : body.slice(separator + 2);
    if (!NAME.test(name)) {
      issues.push(`${where}: invalid environment variable reference "\${${body}}"`);
      return text;
    }
    const found = env[name];
    if (fallback !== undefined) {
      out += found === undefined || found === '' ? fallback : found;
    } else if (found === undefined) {
      issues.push(`${where}: environment variable ${name} is not set`);
      return text;
    } else {
      out += found;
    }
    i = close + 1;
  }
  return out;
}
