import type { IncomingMessage } from 'node:http';
import type { ParsedBody } from './body.js';
import type { Variant } from './options.js';
import type { QueryParams } from './query-params.js';
import type { SimContext } from './sim-context.js';

export type AuthKind = 'access' | 'none';

export interface RequestContext {
  sim: SimContext;
  req: IncomingMessage;
  /** Route key used for stats and envelope version, e.g. `GET /loads/:ref`. */
  route: string;
  /** Path as requested (the envelope's `self`). */
  self: string;
  params: Record<string, string>;
  query: QueryParams;
  body: () => Promise<ParsedBody>;
}

export interface RouteResult {
  status?: number;
  data: unknown;
  count?: number;
  other?: Record<string, unknown>;
  /** Set to make a write ambiguous (applied, but answered with 502 or a dropped socket). */
  ambiguous?: boolean;
}

export interface RouteDef {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Relative to /v1; `:name` is one path segment (an encoded `/` stays inside it). */
  pattern: string;
  auth: AuthKind;
  variants?: Variant[];
  handler: (ctx: RequestContext) => RouteResult | Promise<RouteResult>;
}

interface CompiledRoute {
  def: RouteDef;
  segments: string[];
}

function splitPath(path: string): string[] {
  // Trailing slashes are not significant: `/customer/` and `/customer` are the same route.
  return path.split('/').filter((s, i, all) => !(s === '' && (i === 0 || i === all.length - 1)));
}

export type MatchResult =
  | { kind: 'found'; def: RouteDef; params: Record<string, string>; key: string }
  | { kind: 'method-not-allowed'; key: string }
  | { kind: 'not-found' };

export class Router {
  private readonly routes: CompiledRoute[] = [];

  constructor(defs: RouteDef[], variant: Variant) {
    for (const def of defs) {
      if (def.variants && !def.variants.includes(variant)) continue;
      this.routes.push({ def, segments: splitPath(def.pattern) });
    }
    // Literal segments win over parameters (`/loads/document` before `/loads/:ref`).
    this.routes.sort((a, b) => literalScore(b.segments) - literalScore(a.segments));
  }

  match(method: string, rawPath: string): MatchResult {
    const raw = splitPath(rawPath);
    let segments: string[];
    try {
      segments = raw.map((s) => decodeURIComponent(s));
    } catch {
      return { kind: 'not-found' };
    }
    let methodMismatch: string | undefined;
    for (const route of this.routes) {
      const params = matchSegments(route.segments, segments);
      if (!params) continue;
      const key = `${route.def.method} ${route.def.pattern}`;
      if (route.def.method !== method) {
        methodMismatch ??= `${method} ${route.def.pattern}`;
        continue;
      }
      return { kind: 'found', def: route.def, params, key };
    }
    return methodMismatch ? { kind: 'method-not-allowed', key: methodMismatch } : { kind: 'not-found' };
  }
}

function literalScore(segments: string[]): number {
  return segments.filter((s) => !s.startsWith(':')).length * 10 - segments.length;
}

function matchSegments(pattern: string[], actual: string[]): Record<string, string> | undefined {
  if (pattern.length !== actual.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i] as string;
    const a = actual[i] as string;
    if (p.startsWith(':')) {
      if (a === '') return undefined;
      params[p.slice(1)] = a;
    } else if (p !== a) return undefined;
  }
  return params;
}
