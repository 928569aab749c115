/** Process exit codes of every command (documented in the README and each `--help`). */
export const EXIT_OK = 0;
/** The work failed (a stream failed, a push had errors, the API was unreachable, …). */
export const EXIT_WORK_FAILED = 1;
/** Bad usage or bad configuration; nothing was attempted. */
export const EXIT_USAGE = 2;
