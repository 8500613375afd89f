/**
 * The stop signal of an operator command (`sluice status`, `sluice journal`): aborted by SIGINT
 * or SIGTERM. A reader of stdout that went away (`| head`) ends the command quietly.
 */
export function operatorCommandSignal(): AbortSignal {
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  process.once('SIGTERM', () => stop.abort());
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
  return stop.signal;
}
