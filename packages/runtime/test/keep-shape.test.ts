import { expect, test } from 'vitest';
import { keepShape } from '../src/keep-shape.js';

test('keepShape keeps one object per class, the first given, however often it is called', () => {
  class Shape {
    constructor(readonly id: number) {}
  }
  const first = keepShape(new Shape(1));
  for (let i = 2; i < 1_000; i++) expect(keepShape(new Shape(i))).toBe(first);
  class Other {}
  const other = new Other();
  expect(keepShape(other)).toBe(other);
});
