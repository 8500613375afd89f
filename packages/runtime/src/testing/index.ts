// `@sluice/runtime/testing`: test doubles for hosts of the runtime, apart from the main entry so
// that production code never loads them.
export { FakeClock } from './fake-clock.js';
export { FaultInjectingJournal } from './fault-journal.js';
