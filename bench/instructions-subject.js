// Runs `calls` no-op calls through one subject of the scheduler bench in a closed loop, and
// nothing else: the program that bench/instructions.js counts the instructions of. With 36
// outstanding (the default) it is the bench's bounded loop; with more, a sustained backlog.
// Usage: node --single-threaded bench/instructions-subject.js <subject key> <calls> [outstanding]
import { closedLoop } from './lib.js';
import { makers } from './scheduler-subjects.js';

const [key, calls, outstanding] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4] ?? 36)];
const make = makers[key];
if (make === undefined)
  throw new RangeError(`unknown subject "${key}"; one of ${Object.keys(makers).join(', ')}`);
if (!(Number.isSafeInteger(calls) && calls > 0))
  throw new RangeError(`calls must be a positive integer, got ${process.argv[3]}`);
if (!(Number.isSafeInteger(outstanding) && outstanding >= 36))
  throw new RangeError(`outstanding must be an integer of at least 36, got ${process.argv[4]}`);
// The bounded loop's subject queues 32 behind its 4 slots; a deep one as many as are outstanding.
await closedLoop(calls, outstanding, make(outstanding === 36 ? 32 : outstanding).call);
