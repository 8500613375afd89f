/** pino's numbers of the levels a hand-written line uses. */
const LEVEL_NUMBER = { warn: 40, error: 50 } as const;

/**
 * One log line in pino's format (`{"level","time","name","msg",…}`), written without pino: for
 * what is said when pino is not at hand — commander's own errors before any flag is read, or
 * pino failing to load — so that every line on stderr stays JSON.
 */
export function jsonLine(
  level: keyof typeof LEVEL_NUMBER,
  name: string,
  message: string,
  fields: Record<string, unknown> = {},
): string {
  return `${JSON.stringify({ level: LEVEL_NUMBER[level], time: Date.now(), name, ...fields, msg: message })}\n`;
}
