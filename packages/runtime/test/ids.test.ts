import { expect, test } from 'vitest';
import { CallIdGenerator } from '../src/ids.js';

test('call ids are RFC 9562 UUIDv7 strings, unique and in creation order', () => {
  const ids = new CallIdGenerator();
  const made = Array.from({ length: 20_000 }, () => ids.next());
  for (const id of made.slice(0, 100))
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  expect(new Set(made).size).toBe(made.length);
  expect([...made].sort()).toEqual(made);
});

test('two generators never collide', () => {
  const a = new CallIdGenerator();
  const b = new CallIdGenerator();
  const seen = new Set<string>();
  for (let i = 0; i < 5_000; i++) {
    seen.add(a.next());
    seen.add(b.next());
  }
  expect(seen.size).toBe(10_000);
});
