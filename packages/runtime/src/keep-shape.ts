const kept = new Map<unknown, object>();

/**
 * Keeps one instance of a class built per call alive for the life of the process, so that the
 * call path stays fast after an idle moment (docs/decisions/012-runtime-hot-path.md). One is
 * kept per class: returns the one kept, the first given.
 */
export function keepShape<T extends object>(instance: T): T {
  const constructor: unknown = instance.constructor;
  const first = kept.get(constructor);
  if (first !== undefined) return first as T;
  kept.set(constructor, instance);
  return instance;
}
