// Runs `calls` no-op calls through one subject of the scheduler bench in its bounded closed loop
// (36 outstanding, 32 of them queued), and nothing else: the program that bench/instructions.js
// counts the instructions of.
// Usage: node --single-threaded bench/instructions-subject.js <subject key> <calls>
import { closedLoop } from './lib.js';
import { makers } from './scheduler-subjects.js';

const [key, calls] = [process.argv[2], Number(process.argv[3])];
const make = makers[key];
if (make === undefined)
  throw new RangeError(`unknown subject "${key}"; one of ${Object.keys(makers).join(', ')}`);
if (!(Number.isSafeInteger(calls) && calls > 0))
  throw new RangeError(`calls must be a positive integer, got ${process.argv[3]}`);
await closedLoop(calls, 36, make(32).call);
