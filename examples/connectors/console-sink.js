// A minimal, complete freight-sync connector: prints a summary of every batch it receives.
// Use it with:   connectors: { console: { module: ./examples/connectors/console-sink.js, options: { prefix: '[erp]' } } }
// It depends on freight-sync's published plug-in contract only (`freight-sync/connector`), never
// on the engine's source files.
import { defineConnector } from 'freight-sync/connector';
import { z } from 'zod';

const consoleSink = defineConnector({
  name: 'console-sink',
  // Unknown keys are rejected (.strict()), so a typo in the config is an error, not ignored.
  configSchema: z.object({ prefix: z.string().default('[freight-sync]') }).strict(),
  create(options, context) {
    const received = [];
    return {
      // Tests read this to see what arrived; a real connector would not expose it.
      received,
      async init() {
        context.logger.info({ connector: context.instanceName }, 'console sink ready');
      },
      sink: {
        // Resolving acknowledges the batch: only resolve after the data is safely stored.
        async write(batch, signal) {
          signal.throwIfAborted();
          received.push(batch);
          for (const record of batch.records) {
            process.stdout.write(`${options.prefix} ${batch.stream} ${record.op} ${record.key}\n`);
          }
        },
      },
      async close() {},
    };
  },
});

export default consoleSink;
