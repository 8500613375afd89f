import type { FleetCapacityReport, ModelLimits } from '@sluice/protocol';
import type { ModelRuntimeError } from '../errors.js';

/**
 * One accepted call as a {@link CapacityPort} sees it: an id that names its lease fleet-wide
 * and the pool (provider/model) whose limits it counts against. The scheduler's jobs are the
 * claims themselves, so a claim costs no object of its own.
 */
export interface CapacityClaim {
  readonly callId: string;
  /** Tokens the call used, counted against a shared tokens-per-minute window once it ends. */
  readonly usedTokens: number;
}

/** What a port tells the scheduler about claims it decided asynchronously. */
export interface CapacityEvents<C extends CapacityClaim = CapacityClaim> {
  /** A queued claim got its slot (in the fleet's FIFO order). */
  granted(claim: C): void;
  /** The port lost a queued claim (its lease was reclaimed): it must leave with `reason`. */
  lost(claim: C, reason: ModelRuntimeError): void;
}

/**
 * Model limits held outside this process, shared by every daemon of a fleet (docs/fleet.md).
 * The in-process scheduler keeps its own counters when no port is given;
 * with one, each transition that changes capacity is one message to the port: `acquire` at
 * admission (one awaited round trip that resolves to "slot now" or "queued", or rejects with
 * a typed `OverloadedError`), `leave` when the slot or queue place is given back while the
 * in-flight unit stays (SCH-5, SCH-15), `release` when the call is done. `leave` and `release`
 * are idempotent per claim, so a lost reply can be sent again without freeing twice.
 */
export interface CapacityPort<C extends CapacityClaim = CapacityClaim> {
  /**
   * Registers the scheduler that receives grants and losses, with the limits it was configured
   * with — the limits the fleet shares; called once, before `acquire`.
   */
  bind(events: CapacityEvents<C>, limits: Readonly<ModelLimits>): void;
  /**
   * Claims a slot (resolves `true`) or a queue place (`false`) for `claim` in `pool`, or
   * rejects with `OverloadedError` and holds nothing.
   */
  acquire(claim: C, pool: string): Promise<boolean>;
  /** The claim gives back its slot or its queue place and keeps its in-flight unit. */
  leave(claim: C): void;
  /** The claim is done: everything it holds is given back. */
  release(claim: C): void;
  /** How the limits are shared right now; local knowledge only, never a round trip. */
  report(): FleetCapacityReport;
  /** Gives back what is still held and lets go of the connection; after the scheduler drained. */
  close(): Promise<void>;
}
