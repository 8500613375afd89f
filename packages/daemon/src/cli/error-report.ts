import { LOG_FORMATS } from '../defaults.js';
import { jsonLine } from './json-line.js';

/** A value of `--log-format`. */
export type LogFormat = (typeof LOG_FORMATS)[number];

const FLAG = '--log-format';
const VARIABLE = 'SLUICE_LOG_FORMAT';

/**
 * How a command says why it stops (docs/decisions/041): for a person at a terminal one readable
 * line, `sluice: <message> (<code>)`; for a program (stderr not a terminal, or `--log-format
 * json`) one JSON line in pino's format with the code as a field. The format is first read from
 * the raw arguments and `SLUICE_LOG_FORMAT`, so that a flag commander refuses is reported in it
 * too; {@link use} applies the parsed value, a config file's included.
 */
export class ErrorReport {
  private format: LogFormat;

  constructor(
    format: string | undefined,
    private readonly terminal: boolean,
    private readonly name = 'sluice',
  ) {
    this.format = isLogFormat(format) ? format : 'auto';
  }

  /** The report `argv` and `env` ask for, on a stderr that is (`terminal`) a TTY or not. */
  static fromProcess(argv: readonly string[], env: NodeJS.ProcessEnv, terminal: boolean): ErrorReport {
    return new ErrorReport(flagValue(argv) ?? env[VARIABLE], terminal);
  }

  /** Applies the parsed `--log-format` (flag, variable or config file); an unknown value is ignored. */
  use(format: string | undefined): void {
    if (isLogFormat(format)) this.format = format;
  }

  /** Whether lines are JSON. */
  get json(): boolean {
    return this.format === 'json' || (this.format === 'auto' && !this.terminal);
  }

  /** The line saying `message`, with its stable `code` (and, as JSON, `fields`). */
  line(message: string, code: string, fields: Record<string, unknown> = {}): string {
    if (this.json) return jsonLine('error', this.name, message, { code, ...fields });
    return `${this.name}: ${oneLine(message)} (${code})\n`;
  }
}

/** commander's error codes (`commander.unknownOption`) as Sluice spells a code (`unknown_option`). */
export function commanderCode(code: string): string {
  return code
    .replace(/^commander\./, '')
    .replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)
    .replace(/^_/, '');
}

function isLogFormat(value: string | undefined): value is LogFormat {
  return (LOG_FORMATS as readonly string[]).includes(value ?? '');
}

/** `--log-format json` or `--log-format=json` among the arguments; the last one wins, as in commander. */
function flagValue(argv: readonly string[]): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') break;
    if (arg === FLAG) value = argv[i + 1];
    else if (arg.startsWith(`${FLAG}=`)) value = arg.slice(FLAG.length + 1);
  }
  return value;
}

/** commander's messages start with `error: ` and may span lines; a terminal line says it once. */
function oneLine(message: string): string {
  return message
    .replace(/^error: /, '')
    .split('\n')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .join(' ');
}
