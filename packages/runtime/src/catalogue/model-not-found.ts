import { CataloguedError } from '@sluice/protocol';

/** A call named a model the catalogue holds under no name or alias (`404 model_not_found`). */
export class ModelNotFoundError extends CataloguedError<'model_not_found'> {
  readonly code = 'model_not_found';
  constructor(
    readonly model: string,
    known: readonly string[],
  ) {
    super(
      `The model ${JSON.stringify(model.length > 100 ? `${model.slice(0, 100)}…` : model)} does not exist; ` +
        `GET /v1/models lists the models: ${known.slice(0, 20).join(', ')}${known.length > 20 ? ', …' : ''}`,
    );
  }
}
