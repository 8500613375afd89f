/**
 * Where the runtime sends an exception thrown by code a host handed it — an observer hook, a
 * journal listener — once its own bookkeeping is done. A hook that throws is a bug of its own;
 * it must not leave a slot held, a call unsettled or a listener untold.
 */
export type ErrorReporter = (error: unknown) => void;

/**
 * The default reporter: the exception is thrown again in a microtask of its own, where it is
 * an uncaught exception — as Node's `EventTarget` does with a listener's.
 */
export const rethrowLater: ErrorReporter = (error) => {
  queueMicrotask(() => {
    throw error;
  });
};
