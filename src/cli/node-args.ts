/** The flags node runs with: its command line's (`execArgv`) and NODE_OPTIONS. */
export function nodeArgsOf(env: NodeJS.ProcessEnv = process.env, execArgv: readonly string[] = process.execArgv): string[] {
  return [...execArgv, ...(env.NODE_OPTIONS ?? '').split(/\s+/)];
}
