import { bearerOf } from '../auth.js';
import type { RouteDef } from '../router.js';

export const authRoutes: RouteDef[] = [
  {
    method: 'POST',
    pattern: '/retrieve-token',
    auth: 'none',
    handler: async (ctx) => {
      const body = (await ctx.body()).fields;
      return { data: ctx.sim.auth.retrieve(body['clientId'], body['clientSecret']) };
    },
  },
  {
    method: 'GET',
    pattern: '/token',
    auth: 'none',
    variants: ['main'],
    handler: (ctx) => ({ data: ctx.sim.auth.accessFromRefresh(bearerOf(ctx.req.headers.authorization)) }),
  },
  {
    method: 'GET',
    pattern: '/generate-new-token',
    auth: 'none',
    handler: (ctx) => ({ data: ctx.sim.auth.rotate(bearerOf(ctx.req.headers.authorization)) }),
  },
];
