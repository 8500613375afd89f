import type { ModelRuntime } from '../gateway/model-runtime.js';

/** One model of a {@link ModelCatalogue}: the name clients use, its runtime, aliases and fallbacks. */
export interface CatalogueModel {
  /** The name clients call it by (`/v1/models`, a chat request's `model`). */
  readonly name: string;
  /** Its own bounded scheduler, provider and limits; the journal is shared by every model. */
  readonly runtime: ModelRuntime;
  /** Further names of it (`default` names the catalogue's first model unless one claims it). */
  readonly aliases: readonly string[];
  /** Models tried in this order when an attempt fails in a way another model may not (issue 29). */
  readonly fallbacks: readonly string[];
}
