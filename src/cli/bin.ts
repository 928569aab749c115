#!/usr/bin/env node
import { describeError } from '../util/errors.js';
import { scrubSecrets } from '../util/secrets.js';
import { EXIT_WORK_FAILED } from './exit-codes.js';
import { main } from './main.js';

main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`freight-sync: ${scrubSecrets(describeError(error))}\n`);
    process.exitCode = EXIT_WORK_FAILED;
  },
);
