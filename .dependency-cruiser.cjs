/**
 * The architecture as a check (`npm run check:layers`, run by `npm test`): README "Development"
 * draws the same layers. contracts ← api / state / sync / outbound / webhooks / ops / notify / reconcile ← app (the
 * one composition root) ← cli; connectors import only the contracts and util; production code
 * never imports the simulator. A new arrow upward is a design question, not a shortcut.
 */
const MIDDLE = '^src/(api|state|sync|outbound|webhooks|ops|notify|reconcile|config|mapping|plugins)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'contracts-are-self-contained',
      comment: 'src/contracts is what plug-ins depend on (freight-sync/connector): it imports nothing else from the project.',
      severity: 'error',
      from: { path: '^src/contracts/' },
      to: { path: '^(src/(?!contracts/)|connectors/)' },
    },
    {
      name: 'util-is-a-leaf',
      comment: 'src/util holds helpers every layer (and connectors) may use; it depends on no other layer.',
      severity: 'error',
      from: { path: '^src/util/' },
      to: { path: '^(src/(?!util/)|connectors/)' },
    },
    {
      name: 'connectors-only-contracts-and-util',
      comment: 'A connector is a plug-in: it sees the contracts and util, never the engine, the app or another layer.',
      severity: 'error',
      from: { path: '^connectors/' },
      to: { path: '^src/(?!contracts/|util/)' },
    },
    {
      name: 'no-simulator-in-production',
      comment: 'The API simulator is a test tool. Only the CLI commands that run it (simulate, demo) may load it.',
      severity: 'error',
      from: { path: '^(src|connectors)/', pathNot: ['^src/simulator/', '^src/cli/(commands|actions)/simulate[.]ts$', '^src/cli/(commands|actions)/demo[.]ts$', '^src/app/demo[.]ts$', '^src/app/demo-config[.]ts$'] },
      to: { path: '^src/simulator/' },
    },
    {
      name: 'middle-layers-never-import-app-or-cli',
      comment: 'api, state, sync, outbound, webhooks, ops (and config, mapping, plugins) receive narrow dependencies from src/app/compose.ts; they never reach up into app or cli.',
      severity: 'error',
      from: { path: MIDDLE },
      to: { path: '^src/(app|cli)/' },
    },
    {
      name: 'engine-never-imports-outbound-webhooks-ops',
      comment: 'The pull engine knows nothing of outbound, webhooks or ops; what they add to a delivery is wired in compose (DeliveryHooks).',
      severity: 'error',
      from: { path: '^src/sync/' },
      to: { path: '^src/(outbound|webhooks|ops|notify|reconcile|plugins|app|cli)/' },
    },
    {
      name: 'state-is-below-the-services',
      comment: 'Stores depend on the contracts, util and their own tables only.',
      severity: 'error',
      from: { path: '^src/state/' },
      to: { path: '^src/(api|sync|outbound|webhooks|ops|notify|reconcile|mapping|plugins|config|app|cli)/' },
    },
    {
      name: 'api-is-below-the-services',
      comment: 'The API client is used by the services; it never imports them.',
      severity: 'error',
      from: { path: '^src/api/' },
      to: { path: '^src/(state|sync|outbound|webhooks|ops|notify|reconcile|mapping|plugins|config|app|cli)/' },
    },
    {
      name: 'app-never-imports-cli',
      severity: 'error',
      from: { path: '^src/app/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'no-circular',
      comment: 'A cycle between modules makes the layering meaningless.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
