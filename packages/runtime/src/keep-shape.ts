const kept = new Map<unknown, object>();

/**
 * Keeps one object built by `instance`'s constructor for the life of the process, so that V8
 * keeps the hidden classes ("maps") of the objects that constructor builds. V8 holds those
 * only while one such object is alive: in an idle moment with none in flight, a full
 * collection drops them, and every function optimized for them is thrown away and compiled
 * again once work resumes — about a quarter of the runtime's throughput for a while on this
 * project's benchmark. Call it once per class whose objects are built per call, with an
 * instance built by that class's constructor. One instance is kept per class: returns the one
 * kept, the first given.
 */
export function keepShape<T extends object>(instance: T): T {
  const constructor: unknown = instance.constructor;
  const first = kept.get(constructor);
  if (first !== undefined) return first as T;
  kept.set(constructor, instance);
  return instance;
}
