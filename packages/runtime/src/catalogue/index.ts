export type { CatalogueModel } from './catalogue-model.js';
export { mayFallBack } from './fallback-rule.js';
export { FallbackStream, type CatalogueStream } from './fallback-stream.js';
export {
  DEFAULT_ALIAS,
  ModelCatalogue,
  type CatalogueAnswer,
  type CatalogueModelOptions,
} from './model-catalogue.js';
export { ModelNotFoundError } from './model-not-found.js';
