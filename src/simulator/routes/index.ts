import type { RouteDef } from '../router.js';
import { auditWebhookRoutes } from './audits-webhooks.js';
import { authRoutes } from './auth.js';
import { billRoutes } from './bills.js';
import { customerRoutes } from './customers.js';
import { invoiceRoutes } from './invoices.js';
import { loadRoutes } from './loads.js';
import { pricingRoutes } from './pricing.js';

export const allRoutes: RouteDef[] = [...authRoutes, ...loadRoutes, ...invoiceRoutes, ...billRoutes, ...customerRoutes, ...pricingRoutes, ...auditWebhookRoutes];
