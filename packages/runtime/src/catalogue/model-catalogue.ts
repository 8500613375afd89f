import type { ModelSchedulerSnapshot } from '@sluice/protocol';
import type { CallOptions } from '../gateway/model-gateway.js';
import type { ModelRuntime } from '../gateway/model-runtime.js';
import type { GenerationRequest, ModelResponse } from '../types.js';
import type { CatalogueModel } from './catalogue-model.js';
import { mayFallBack } from './fallback-rule.js';
import { FallbackStream, type CatalogueStream } from './fallback-stream.js';
import { ModelNotFoundError } from './model-not-found.js';

/** A model of the catalogue as its host declares it. */
export interface CatalogueModelOptions {
  name: string;
  runtime: ModelRuntime;
  aliases?: readonly string[];
  fallbacks?: readonly string[];
}

/** A complete answer and the catalogue name of the model that gave it. */
export interface CatalogueAnswer {
  response: ModelResponse;
  model: string;
}

/** The alias of the catalogue's first model, unless a model claims the name. */
export const DEFAULT_ALIAS = 'default';

const NO_OPTIONS: CallOptions = Object.freeze({});

/**
 * The models a daemon serves by name (issue 29): each its own {@link ModelRuntime} — its own
 * bounded scheduler and provider, one shared journal — with aliases and fallbacks. A call names a
 * model (or its alias; none is the first model) and goes to that model's runtime, then to its
 * fallbacks in order when an attempt fails in a way another model may not ({@link mayFallBack}).
 * An unknown name is a {@link ModelNotFoundError}. Admission stays synchronous: the first attempt
 * that admits the call does so before `complete` or `stream` returns.
 */
export class ModelCatalogue {
  /** The models in their declared order; the first is the default. */
  readonly models: readonly CatalogueModel[];
  private readonly byName = new Map<string, CatalogueModel>();
  private readonly chains = new Map<CatalogueModel, readonly CatalogueModel[]>();

  constructor(models: readonly CatalogueModelOptions[]) {
    if (!Array.isArray(models) || models.length === 0)
      throw new RangeError('a model catalogue needs at least one model');
    this.models = models.map((model) => this.add(model));
    if (!this.byName.has(DEFAULT_ALIAS)) this.byName.set(DEFAULT_ALIAS, this.models[0]!);
    for (const model of this.models) this.chains.set(model, [model, ...this.fallbacksOf(model)]);
  }

  /** The catalogue's first model: what a call naming no model gets. */
  get defaultModel(): CatalogueModel {
    return this.models[0]!;
  }

  /**
   * The names `/v1/models` lists: each model's, then its declared aliases. `default` names the
   * first model even when no model declares it, unlisted (a one-model catalogue lists one name).
   */
  names(): string[] {
    return this.models.flatMap((model) => [model.name, ...model.aliases]);
  }

  /** The model `name` (or alias) names; the default when `undefined`. */
  get(name: string | undefined): CatalogueModel {
    if (name === undefined) return this.defaultModel;
    const model = this.byName.get(name);
    if (model === undefined) throw new ModelNotFoundError(name, this.names());
    return model;
  }

  /** A complete answer from `name` or its fallbacks; throws the first attempt's admission refusal. */
  complete(
    name: string | undefined,
    request: GenerationRequest,
    options: CallOptions = NO_OPTIONS,
  ): Promise<CatalogueAnswer> {
    const chain = this.chains.get(this.get(name))!;
    if (chain.length === 1) {
      // No fallback to link: the runtime's own call, with no id to hand out.
      const model = chain[0]!;
      return model.runtime.complete(request, options).then((response) => ({ response, model: model.name }));
    }
    return settleComplete(chain, admitComplete(chain, 0, request, options, undefined), request, options);
  }

  /** A stream from `name` or, before its first event, its fallbacks; admission refusals throw. */
  stream(
    name: string | undefined,
    request: GenerationRequest,
    options: CallOptions = NO_OPTIONS,
  ): CatalogueStream {
    const chain = this.chains.get(this.get(name))!;
    if (chain.length > 1) return new FallbackStream(chain, request, options);
    const stream = chain[0]!.runtime.stream(request, options);
    return {
      callId: stream.callId,
      model: chain[0]!.name,
      cancel: () => stream.cancel(),
      [Symbol.asyncIterator]: () => stream[Symbol.asyncIterator](),
    };
  }

  /** Each model's scheduler snapshot, by name (SCH-11: no prompt content). */
  snapshots(): Array<{ model: string; snapshot: ModelSchedulerSnapshot }> {
    return this.models.map((model) => ({ model: model.name, snapshot: model.runtime.schedulerSnapshot() }));
  }

  /** Shuts every model's runtime down (see {@link ModelRuntime.shutdown}). */
  async shutdown(options: { abortRunning?: boolean } = {}): Promise<void> {
    await Promise.all(this.models.map((model) => model.runtime.shutdown(options)));
  }

  private add(options: CatalogueModelOptions): CatalogueModel {
    const { name, runtime } = options;
    if (typeof name !== 'string' || name === '')
      throw new RangeError(`model name must be a non-empty string, got ${String(name)}`);
    if (runtime === undefined) throw new TypeError(`model "${name}" needs a runtime`);
    const model: CatalogueModel = {
      name,
      runtime,
      aliases: [...(options.aliases ?? [])],
      fallbacks: [...(options.fallbacks ?? [])],
    };
    for (const key of [name, ...model.aliases]) {
      if (this.byName.has(key)) throw new RangeError(`model name or alias "${key}" is given twice`);
      this.byName.set(key, model);
    }
    return model;
  }

  private fallbacksOf(model: CatalogueModel): CatalogueModel[] {
    const chain = model.fallbacks.map((name) => {
      const fallback = this.byName.get(name);
      if (fallback === undefined)
        throw new RangeError(`model "${model.name}" falls back to "${name}", which is not in the catalogue`);
      if (fallback === model) throw new RangeError(`model "${model.name}" falls back to itself`);
      return fallback;
    });
    if (new Set(chain).size !== chain.length)
      throw new RangeError(`model "${model.name}" names a fallback twice`);
    return chain;
  }
}

/** One attempt of a complete call: which model of the chain, its answer, the client's call id. */
interface Attempt {
  index: number;
  answer: Promise<ModelResponse>;
  firstCallId: string;
}

/** The first model from `from` on that admits the call; a refusal that may pass tries the next. */
function admitComplete(
  chain: readonly CatalogueModel[],
  from: number,
  request: GenerationRequest,
  options: CallOptions,
  firstCallId: string | undefined,
): Attempt {
  for (let index = from; ; index++) {
    const attemptOptions = firstCallId === undefined ? options : { ...options, fallbackOf: firstCallId };
    try {
      const { callId, answer } = chain[index]!.runtime.completeCall(request, attemptOptions);
      return { index, answer, firstCallId: firstCallId ?? callId };
    } catch (error) {
      if (index + 1 >= chain.length || !mayFallBack(error)) throw error;
    }
  }
}

/** The answer of the first attempt that succeeds; a failure that may pass starts the next one. */
async function settleComplete(
  chain: readonly CatalogueModel[],
  first: Attempt,
  request: GenerationRequest,
  options: CallOptions,
): Promise<CatalogueAnswer> {
  for (let attempt = first; ;) {
    try {
      return { response: await attempt.answer, model: chain[attempt.index]!.name };
    } catch (error) {
      const last = attempt.index + 1 >= chain.length;
      if (last || options.signal?.aborted === true || !mayFallBack(error)) throw error;
      attempt = admitComplete(chain, attempt.index + 1, request, options, attempt.firstCallId);
    }
  }
}
