import { InvalidArgumentError } from 'commander';

/** Parses a flag's value as an integer in `[min, max]`, naming the range when it is not. */
export function integer(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (raw: string): number => {
    const value = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
    if (!Number.isSafeInteger(value) || value < min || value > max)
      throw new InvalidArgumentError(
        max === Number.MAX_SAFE_INTEGER
          ? `must be an integer >= ${min}`
          : `must be an integer in [${min}, ${max}]`,
      );
    return value;
  };
}

/** Accepts any value but a blank one. */
export function nonEmpty(raw: string): string {
  if (raw.trim().length === 0) throw new InvalidArgumentError('must not be empty');
  return raw;
}

/** Adds a browser origin (`scheme://host[:port]`) to those a repeated flag gave before. */
export function collectOrigin(value: string, previous: string[] = []): string[] {
  let origin: URL;
  try {
    origin = new URL(value);
  } catch {
    throw new InvalidArgumentError('must be an origin such as https://app.example.com');
  }
  if (origin.origin === 'null' || origin.origin !== value.replace(/\/+$/, ''))
    throw new InvalidArgumentError('must be an origin (scheme://host[:port]) without a path');
  return [...previous, origin.origin];
}
