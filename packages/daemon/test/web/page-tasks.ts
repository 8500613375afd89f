import type { Page } from 'playwright-core';

// The page's main-thread tasks as Chromium's trace records them, with the CPU time each took:
// on a loaded machine a task's wall time mostly says how long the thread waited for a core,
// its CPU time how much work the page did in one go, which is what a test can bound.

/** One task of the page's main thread. */
export interface PageTask {
  /** Wall time (ms). */
  wallMs: number;
  /** CPU time of the thread (ms). */
  cpuMs: number;
}

interface TraceEvent {
  name: string;
  ph: string;
  pid: number;
  tid: number;
  ts: number;
  dur?: number;
  tdur?: number;
  args?: { name?: string };
}

/** The top-level tasks of the renderer's main thread (`CrRendererMain`) in `events`. */
function mainThreadTasks(events: TraceEvent[]): PageTask[] {
  const main = events.find(
    (e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain',
  );
  if (main === undefined) throw new Error('the trace has no renderer main thread');
  return events
    .filter(
      (e) =>
        e.pid === main.pid &&
        e.tid === main.tid &&
        e.ph === 'X' &&
        e.name === 'ThreadControllerImpl::RunTask',
    )
    .map((e) => ({ wallMs: (e.dur ?? 0) / 1000, cpuMs: (e.tdur ?? 0) / 1000 }));
}

/** Traces `page` from now until `stop()`, which returns its main-thread tasks (within 30 s). */
export async function traceTasks(page: Page): Promise<{ stop(): Promise<PageTask[]> }> {
  const cdp = await page.context().newCDPSession(page);
  const events: TraceEvent[] = [];
  cdp.on('Tracing.dataCollected', ({ value }) => events.push(...(value as unknown as TraceEvent[])));
  await cdp.send('Tracing.start', { categories: 'toplevel', transferMode: 'ReportEvents' });
  return {
    stop: async () => {
      const complete = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the trace did not complete within 30 s')), 30_000);
        cdp.once('Tracing.tracingComplete', () => (clearTimeout(timer), resolve()));
      });
      await cdp.send('Tracing.end');
      await complete;
      await cdp.detach();
      return mainThreadTasks(events);
    },
  };
}
