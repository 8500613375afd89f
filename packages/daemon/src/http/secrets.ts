import { createHash, timingSafeEqual } from 'node:crypto';

/** Compares two secrets in constant time (hashing first gives equal-length buffers). */
export function tokensEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}
