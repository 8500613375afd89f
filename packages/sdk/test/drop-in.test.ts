import type {
  DaemonClient as ReferenceClient,
  DaemonSessionClient as ReferenceSessionClient,
} from '@qwen-code/sdk/daemon';
import { expectTypeOf, test } from 'vitest';
import type { DaemonClient, DaemonSessionClient } from '../src/index.js';

// "Drop-in for the reference client": code that calls @qwen-code/sdk 0.1.14's DaemonClient /
// DaemonSessionClient with its own argument types compiles against ours unchanged. Checked by
// the typecheck step (tsc -p tsconfig.test.json); a mismatch fails `npm test`.

type Args<C, K extends keyof C> = C[K] extends (...args: infer A) => unknown ? A : never;
type Tail<T> = T extends [unknown, ...infer Rest] ? Rest : never;

test('DaemonClient accepts the reference arguments in the reference positions', () => {
  expectTypeOf<Args<ReferenceClient, 'createOrAttachSession'>>().toMatchTypeOf<
    Args<DaemonClient, 'createOrAttachSession'>
  >();
  expectTypeOf<Args<ReferenceClient, 'sessionStatus'>>().toMatchTypeOf<Args<DaemonClient, 'sessionStatus'>>();
  expectTypeOf<Args<ReferenceClient, 'prompt'>>().toMatchTypeOf<Args<DaemonClient, 'prompt'>>();
  expectTypeOf<Args<ReferenceClient, 'promptNonBlocking'>>().toMatchTypeOf<
    Args<DaemonClient, 'promptNonBlocking'>
  >();
  expectTypeOf<Args<ReferenceClient, 'subscribeEvents'>>().toMatchTypeOf<
    Args<DaemonClient, 'subscribeEvents'>
  >();
  expectTypeOf<Args<ReferenceClient, 'cancel'>>().toMatchTypeOf<Args<DaemonClient, 'cancel'>>();
  expectTypeOf<Args<ReferenceClient, 'heartbeat'>>().toMatchTypeOf<Args<DaemonClient, 'heartbeat'>>();
  expectTypeOf<Args<ReferenceClient, 'getPendingPrompts'>>().toMatchTypeOf<
    Args<DaemonClient, 'getPendingPrompts'>
  >();
  expectTypeOf<Args<ReferenceClient, 'removePendingPrompt'>>().toMatchTypeOf<
    Args<DaemonClient, 'removePendingPrompt'>
  >();
  expectTypeOf<Args<ReferenceClient, 'respondToPermission'>>().toMatchTypeOf<
    Args<DaemonClient, 'respondToPermission'>
  >();
  expectTypeOf<Args<ReferenceClient, 'respondToSessionPermission'>>().toMatchTypeOf<
    Args<DaemonClient, 'respondToSessionPermission'>
  >();
  expectTypeOf<Args<ReferenceClient, 'closeSession'>>().toMatchTypeOf<Args<DaemonClient, 'closeSession'>>();
  expectTypeOf<Args<ReferenceClient, 'detachSession'>>().toMatchTypeOf<Args<DaemonClient, 'detachSession'>>();
  expectTypeOf<Args<ReferenceClient, 'loadSession'>>().toMatchTypeOf<Args<DaemonClient, 'loadSession'>>();
  expectTypeOf<Args<ReferenceClient, 'resumeSession'>>().toMatchTypeOf<Args<DaemonClient, 'resumeSession'>>();
  expectTypeOf<[string, { name?: string }, string]>().toMatchTypeOf<Args<DaemonClient, 'branchSession'>>();
  expectTypeOf<ReturnType<DaemonClient['prompt']>>().toMatchTypeOf<ReturnType<ReferenceClient['prompt']>>();
  expectTypeOf<DaemonClient['maxPendingPromptsPerSession']>().toEqualTypeOf<
    ReferenceClient['maxPendingPromptsPerSession']
  >();
});

test('BP-14 DaemonSessionClient keeps the reference factory and method positions', () => {
  expectTypeOf<Tail<Parameters<typeof ReferenceSessionClient.createOrAttach>>>().toMatchTypeOf<
    Tail<Parameters<typeof DaemonSessionClient.createOrAttach>>
  >();
  expectTypeOf<Tail<Parameters<typeof ReferenceSessionClient.load>>>().toMatchTypeOf<
    Tail<Parameters<typeof DaemonSessionClient.load>>
  >();
  expectTypeOf<Tail<Parameters<typeof ReferenceSessionClient.resume>>>().toMatchTypeOf<
    Tail<Parameters<typeof DaemonSessionClient.resume>>
  >();
  expectTypeOf<Args<ReferenceSessionClient, 'prompt'>>().toMatchTypeOf<Args<DaemonSessionClient, 'prompt'>>();
  expectTypeOf<Args<ReferenceSessionClient, 'events'>>().toMatchTypeOf<Args<DaemonSessionClient, 'events'>>();
  expectTypeOf<Args<ReferenceSessionClient, 'removePendingPrompt'>>().toMatchTypeOf<
    Args<DaemonSessionClient, 'removePendingPrompt'>
  >();
  expectTypeOf<Args<ReferenceSessionClient, 'respondToPermission'>>().toMatchTypeOf<
    Args<DaemonSessionClient, 'respondToPermission'>
  >();
});
