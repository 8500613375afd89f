export { ModelTableError, type ModelSpec } from './model-spec.js';
export { modelSpecs, refuseMixedForms } from './model-specs.js';
export { readModelTables, type KeySources } from './model-table.js';
export {
  buildCatalogue,
  createProviders,
  loadProviders,
  needsLoading,
  type SharedModelParts,
} from './catalogue-builder.js';
