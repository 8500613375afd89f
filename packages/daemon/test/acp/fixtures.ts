/** Looks like a model-runtime error: a class the HTTP table does not know, with its own stable code. */
export class ModelTimeoutErrorLike extends Error {
  readonly code = 'model_queue_timeout';
  constructor() {
    super('queued past the deadline');
  }
}
