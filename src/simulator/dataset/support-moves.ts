import { COLLECTION_CODES, makeId } from '../ids.js';
import { hashInt } from '../prng.js';
import { FIRST_NAMES, LAST_NAMES } from './constants.js';
import { iso, pad, type DatasetContext } from './context.js';
import { loadId, referenceNumberOf } from './loads.js';

export function supportMoveId(ctx: DatasetContext, p: number): string {
  return makeId(COLLECTION_CODES.supportMoves, ctx.seed, p);
}

/** A support move (§2.10, main only). `driverPay` is stripped unless includeDriverPay=true. */
export function generateSupportMove(ctx: DatasetContext, p: number): Record<string, unknown> {
  const h = (n: number) => hashInt(ctx.seed, p, 400 + n);
  const timeline = ctx.timelines.supportMoves;
  const loadPos = ctx.counts.loads > 0 ? h(1) % ctx.counts.loads : 0;
  const first = FIRST_NAMES[h(2) % FIRST_NAMES.length] as string;
  const last = LAST_NAMES[h(3) % LAST_NAMES.length] as string;
  const createdMs = timeline.createdAtMs(p);
  const distance = 3 + (h(4) % 80);
  const driverId = makeId(COLLECTION_CODES.misc, ctx.seed, 7_000_000 + (h(2) % 40));
  return {
    _id: supportMoveId(ctx, p),
    supportMoveNumber: `SM${pad(p + 1, 7)}`,
    moveStatus: 'DISPATCHED',
    typeOfLoad: 'SUPPORT',
    supportMoveType: h(5) % 2 === 0 ? 'SM_MANUAL' : 'SM_SYSTEM',
    totalDistance: distance,
    distanceUnit: 'mi',
    driver: {
      driverId,
      firstName: first,
      lastName: last,
      mobile: `555${pad(h(6) % 10_000_000, 7)}`,
      countryCode: '+1',
      truck: { equipmentId: `TRK${h(7) % 500}`, equipmentType: 'TRUCK', year: 2018 + (h(8) % 6), make: 'Freightliner', model: 'Cascadia', regExpiration: iso(createdMs + 300 * 86_400_000), licencePlateState: 'NJ', licencePlateNumber: `NJ${h(9) % 100_000}`, annualInspection: iso(createdMs), bobtailInsurance: iso(createdMs) },
    },
    chassis: { id: `CH${h(10) % 10_000}`, number: `TRHU${pad(h(11) % 1_000_000, 6)}`, type: 'Standard', size: "40'", owner: 'TRAC' },
    driverOrder: ['PULLCONTAINER', 'DROPCONTAINER'].map((type, i) => ({
      customer: { companyName: `Yard ${1 + ((h(12) + i) % 5)}`, address: { street: '1 Yard Rd', city: 'Newark', state: 'NJ', country: 'US', zipCode: '07114', latitude: 40.7, longitude: -74.1 }, geofence: { center: [-74.1, 40.7], polygon: [], zoom: 15, startPoint: null } },
      moveId: makeId(COLLECTION_CODES.misc, ctx.seed, 8_000_000 + p * 2 + i),
      eventId: null,
      referenceNumber: i === 0 ? referenceNumberOf(ctx, loadPos) : null,
      distance: Math.floor(distance / 2),
      type,
    })),
    driverPay: [
      { driverName: `${first} ${last}`, from: 'Yard 1', to: 'Yard 2', fromEventId: null, toEventId: null, startDate: iso(createdMs), endDate: iso(createdMs + 3_600_000), taxAmount: 0, amount: 25 + (h(13) % 100), status: 'APPROVED', finalAmount: 25 + (h(13) % 100), createdAt: iso(createdMs), updatedAt: iso(createdMs) },
    ],
    loadAssignedDate: iso(createdMs),
    destinationETA: iso(createdMs + 7_200_000),
    loadId: loadId(ctx, loadPos),
    branch: makeId(COLLECTION_CODES.misc, ctx.seed, 20),
    createdAt: iso(createdMs),
    updatedAt: iso(timeline.updatedAtMs(p)),
  };
}
