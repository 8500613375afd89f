import { collectOrigin, integer, nonEmpty } from './argument-parsers.js';

/**
 * What a setting's value is: how a flag's (or an environment variable's, or a TOML key's) text
 * becomes the value, why a value a host passes is refused, and how the reference names it.
 * `C` is the value the command line gives, `V` the one `DaemonConfig` holds (they differ only
 * where the flag is a shorthand, as `--agent`'s strings for `agents`).
 */
export interface Kind<C, V = C> {
  /** The type as the reference and the help name it: `integer in [1, 1000000]`. */
  readonly describe: string;
  /** The flag's text as the value; throws (commander's `InvalidArgumentError`) naming the rule. */
  readonly parse?: (raw: string, previous: C | undefined) => C;
  /** The command line's value as the configuration holds it. */
  readonly toConfig?: (value: C) => V;
  /** Why a configured value is refused (`must be positive`), or `undefined` when it is valid. */
  readonly violation: (value: unknown) => string | undefined;
  /** A flag without a value (`--require-auth`); `negate` for `--no-metrics`. */
  readonly boolean?: 'on' | 'negate';
  /** Commander's `choices`. */
  readonly choices?: readonly string[];
}

/** Options of {@link int}. */
export interface IntOptions {
  max?: number;
  /** `Infinity` is accepted from a host as "unlimited" (the flag takes 0). */
  infinity?: boolean;
  /** A stricter lower bound for the command line than for a host (a lease shorter than its renewal). */
  flagMin?: number;
}

/** A safe integer `>= min` (and `<= max`); the flag's parser names its range. */
export function int(min: 0 | 1, options: IntOptions = {}): Kind<number> {
  const { max, infinity = false, flagMin = min } = options;
  return {
    describe: max === undefined ? `integer >= ${flagMin}` : `integer in [${flagMin}, ${max}]`,
    parse: integer(flagMin, max),
    violation: (value) => {
      if (infinity && value === Infinity) return undefined;
      if (typeof value !== 'number' || !Number.isInteger(value))
        return `must be ${min === 0 ? 'a non-negative' : 'a positive'} integer`;
      if (value < min) return `must be ${min === 0 ? 'non-negative' : 'positive'}`;
      if (max !== undefined && value > max) return `must be at most ${max}`;
      return undefined;
    },
  };
}

/** A string; `nonEmpty` refuses a blank flag and an empty configured value. */
export function text(options: { nonEmpty: boolean } = { nonEmpty: true }): Kind<string> {
  return {
    describe: options.nonEmpty ? 'non-empty string' : 'string',
    ...(options.nonEmpty ? { parse: nonEmpty } : {}),
    violation: (value) => {
      if (typeof value !== 'string') return 'must be a string';
      return options.nonEmpty && value.length === 0 ? 'must not be empty' : undefined;
    },
  };
}

/** One of `values`. */
export function oneOf<const T extends string>(values: readonly T[]): Kind<T> {
  return {
    describe: values.map((v) => `\`${v}\``).join(', '),
    choices: values,
    violation: (value) =>
      typeof value === 'string' && (values as readonly string[]).includes(value)
        ? undefined
        : `must be one of ${values.map((v) => `"${v}"`).join(', ')}`,
  };
}

/** A string matching `pattern`; `rule` says what that means. */
export function matching(pattern: RegExp, rule: string): Kind<string> {
  return {
    describe: rule.replace(/^must be /, ''),
    parse: nonEmpty,
    violation: (value) => (typeof value === 'string' && pattern.test(value) ? undefined : rule),
  };
}

/** An absolute http(s) URL. */
export const httpUrl: Kind<string> = {
  describe: 'http(s) URL',
  parse: nonEmpty,
  violation: (value) => {
    if (typeof value !== 'string' || !URL.canParse(value)) return 'must be a URL';
    const { protocol } = new URL(value);
    return protocol === 'http:' || protocol === 'https:' ? undefined : 'must be an http(s) URL';
  },
};

/** A `redis://` or `rediss://` URL naming a host. */
export const redisUrl: Kind<string> = {
  describe: 'redis:// URL',
  parse: nonEmpty,
  violation: (value) => {
    if (typeof value !== 'string' || !URL.canParse(value)) return 'must be a redis:// URL';
    const { protocol, hostname } = new URL(value);
    if (protocol !== 'redis:' && protocol !== 'rediss:') return 'must be a redis:// or rediss:// URL';
    return hostname === '' ? 'must name a host (e.g. redis://127.0.0.1:6379)' : undefined;
  },
};

/** A flag without a value: given means true (`negate`: given means false, `--no-metrics`). */
export function flag(mode: 'on' | 'negate' = 'on'): Kind<boolean> {
  return {
    describe: 'boolean',
    boolean: mode,
    violation: (value) => (typeof value === 'boolean' ? undefined : 'must be true or false'),
  };
}

/** A repeatable flag of browser origins (`scheme://host[:port]`). */
export const origins: Kind<string[]> = {
  describe: 'list of origins',
  parse: collectOrigin,
  violation: (value) => (Array.isArray(value) ? undefined : 'must be a list of origins'),
};
