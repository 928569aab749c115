/** The two deployments of the API (spec §0): they share conventions and differ where marked. */
export const API_VARIANTS = ['main', 'brokerage'] as const;
export type ApiVariant = (typeof API_VARIANTS)[number];
