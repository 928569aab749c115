/**
 * The shape of a long-running part of `freight-sync run`, declared here so the parts (outbound,
 * webhooks, ops) can build one without importing the app layer that runs them (src/app/daemon.ts
 * uses the same shape). `start` resolves once the part is up, with `loops`: a promise that settles
 * when its loops end and rejects when one died on its own. `stop` drains and resolves.
 */
export interface DaemonServiceLike {
  readonly name: string;
  start(): Promise<{ loops: Promise<void> }>;
  stop(): Promise<void>;
}
