import { z } from 'zod';
import type { ApiVariant } from '../../api/variant.js';
import { bool, idList, num, text } from './field-values.js';

/**
 * An element of `consigneeDetails` / `shipperDetails`, or `emptyOriginDetails` (§4.4.1):
 * `company_name`, `address`, `address1`, `city`, `country`, `zip_code` are required; `terminals`
 * exists only in main.
 */
export function addressDetailsSchema(variant: ApiVariant) {
  const shape = {
    company_name: text(),
    address: text(),
    address1: text(),
    city: text(),
    country: text(),
    zip_code: text(),
    state: text().optional(),
    lat: num().optional(),
    lng: num().optional(),
    isValidAddress: bool().optional(),
    main_contact_name: text().optional(),
    ...(variant === 'main' ? { terminals: idList().optional() } : {}),
  };
  return z.strictObject(shape, { error: (issue) => (issue.code === 'unrecognized_keys' ? `unknown field(s) ${issue.keys.join(', ')}` : undefined) });
}
