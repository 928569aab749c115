import type { z } from 'zod';

/**
 * Every key path a config file may hold, read from the zod schema itself: objects contribute their
 * keys, records a `<name>` placeholder, and wrappers (optional, prefault, default, pipe/transform,
 * preprocess) are looked through. The `sync.streams` object, whose keys are the stream names,
 * appears once as `sync.streams.<stream>`.
 */
export function schemaKeyPaths(schema: z.ZodType, streamNames: readonly string[]): string[] {
  const out = new Set<string>();
  walk(schema as unknown as Node, '', out, streamNames);
  return [...out].sort();
}

interface Node {
  _zod: { def: Record<string, any> & { type: string } };
}

function walk(node: Node, at: string, out: Set<string>, streams: readonly string[]): void {
  const def = node._zod.def;
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'catch':
      return walk(def.innerType, at, out, streams);
    case 'pipe':
      // z.preprocess(fn, schema) and schema.transform(fn) are pipes; the keys live on the object side.
      walk(def.in, at, out, streams);
      return walk(def.out, at, out, streams);
    case 'object': {
      const keys = Object.keys(def.shape as object);
      if (keys.length > 0 && keys.every((k) => streams.includes(k))) {
        const child = `${at}.<stream>`;
        out.add(child.replace(/^\./, ''));
        return walk(def.shape[keys[0]!], child, out, streams);
      }
      for (const key of keys) {
        const child = `${at}.${key}`.replace(/^\./, '');
        out.add(child);
        walk(def.shape[key], child, out, streams);
      }
      return;
    }
    case 'record': {
      const child = `${at}.<name>`.replace(/^\./, '');
      out.add(child);
      return walk(def.valueType, child, out, streams);
    }
    default:
      return;
  }
}
