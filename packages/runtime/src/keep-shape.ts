const kept: object[] = [];

/**
 * Keeps `instance` for the life of the process, so that V8 keeps the hidden classes ("maps")
 * of the objects its constructor builds. V8 holds those only while one such object is alive:
 * in an idle moment with none in flight, a full collection drops them, and every function
 * optimized for them is thrown away and compiled again once work resumes — a third of the
 * runtime's throughput for a while on this project's benchmark. Call it once per class whose
 * objects are built per call, with an instance built like those (same fields, same kinds of
 * values: strings, NaN for times).
 */
export function keepShape<T extends object>(instance: T): T {
  kept.push(instance);
  return instance;
}
