import type { DaemonClient } from '@sluice/sdk';
import { useEffect, useState } from 'preact/hooks';

// The model scheduler's state in a few characters: calls executing of the slots, and queued.
// Polled every two seconds while the page is visible.

interface Snapshot {
  executing: number;
  preparing: number;
  queued: number;
  accepting: boolean;
  limits: { maxConcurrency: number; maxQueued: number };
}

export function SchedulerIndicator({ client }: { client: DaemonClient }) {
  const [snapshot, setSnapshot] = useState<Snapshot | undefined>(undefined);
  useEffect(() => {
    let stopped = false;
    const poll = async (): Promise<void> => {
      if (document.visibilityState === 'visible')
        setSnapshot((await client.runtimeSnapshot().catch(() => undefined)) as Snapshot | undefined);
    };
    void poll();
    const timer = setInterval(() => void (stopped || poll()), 2_000);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [client]);
  if (snapshot === undefined) return <span class="scheduler muted">model: …</span>;
  const busy = snapshot.executing + snapshot.preparing;
  const level = !snapshot.accepting || snapshot.queued > 0 ? 'busy' : busy > 0 ? 'working' : 'idle';
  return (
    <span
      class={`scheduler ${level}`}
      data-testid="scheduler"
      title="Model scheduler: calls running of its slots, and calls waiting"
    >
      model {busy}/{snapshot.limits.maxConcurrency} running · {snapshot.queued} waiting
    </span>
  );
}
