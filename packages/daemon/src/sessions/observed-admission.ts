import type { PromptAdmitter } from './admission.js';
import type { PromptQueueFullError } from './errors.js';
import type { AdmissionObserver } from './options.js';

type Admitter = Pick<PromptAdmitter, 'admit'>;

/**
 * `admitter`, with `observer` told of each prompt it admits and each it refuses (the metrics'
 * counters); `admitter` itself when there is no observer, so the admission path pays nothing.
 * A retry answered from its `Idempotency-Key` admits nothing and is not told.
 */
export function observedAdmitter(admitter: Admitter, observer: AdmissionObserver | undefined): Admitter {
  if (observer === undefined) return admitter;
  return {
    admit(sessionId, prompt, options) {
      let admission: ReturnType<Admitter['admit']>;
      try {
        admission = admitter.admit(sessionId, prompt, options);
      } catch (error) {
        observer.refused(sessionId, error);
        throw error;
      }
      if (isRefusal(admission)) observer.refused(sessionId, admission);
      else if (!admission.replayed) observer.admitted(sessionId);
      return admission;
    },
  };
}

function isRefusal(admission: ReturnType<Admitter['admit']>): admission is PromptQueueFullError {
  return admission instanceof Error;
}
