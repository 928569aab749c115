/** The two deployments of the API (spec §0): they share conventions and differ where marked. */
export type ApiVariant = 'main' | 'brokerage';

export const API_VARIANTS: readonly ApiVariant[] = ['main', 'brokerage'];
