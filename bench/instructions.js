// CPU instructions per no-op call, counted by valgrind's callgrind: a measure of the work a
// subject does that the machine's noise does not move. Wall-clock ratios on a shared virtual
// machine swing by ±10 % from one minute to the next; an instruction count repeats within a few per cent.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

const run = promisify(execFile);
const SUBJECT = fileURLToPath(new URL('./instructions-subject.js', import.meta.url));

/** Whether valgrind is installed; the section is skipped (and says so) without it. */
export async function hasValgrind() {
  try {
    await run('valgrind', ['--version']);
    return true;
  } catch {
    return false;
  }
}

/** Instructions the whole process executes for `calls` calls through subject `key`. */
async function countInstructions(key, calls) {
  // One thread: V8 then compiles and collects on the main thread, at the same points every run,
  // so the count repeats. The time of day still matters a little (call ids and timestamps are
  // formatted once per millisecond, and under valgrind a call takes ~100 µs): that work is counted
  // about 100 times as often as at full speed, which weighs against the runtime only.
  const { stderr } = await run(
    'valgrind',
    [
      '--tool=callgrind',
      '--callgrind-out-file=/dev/null',
      process.execPath,
      '--single-threaded',
      SUBJECT,
      key,
      String(calls),
    ],
    { maxBuffer: 16 * 2 ** 20 },
  );
  const match = /Collected : (\d+)/.exec(stderr);
  if (!match) throw new Error(`callgrind printed no count for ${key}:\n${stderr.slice(-2_000)}`);
  return Number(match[1]);
}

/**
 * Instructions per call of each subject in its bounded loop: the count for `long` calls minus
 * the count for `short` ones, over the difference — start-up, loading and the first
 * compilations cancel out. Runs two counts at a time.
 */
export async function instructionsPerCall(keys, { short, long }) {
  const jobs = keys.flatMap((key) => [
    { key, calls: short },
    { key, calls: long },
  ]);
  const counts = new Map();
  let next = 0;
  const lane = async () => {
    while (next < jobs.length) {
      const job = jobs[next++];
      counts.set(`${job.key}/${job.calls}`, await countInstructions(job.key, job.calls));
    }
  };
  await Promise.all([lane(), lane()]);
  return new Map(
    keys.map((key) => [key, (counts.get(`${key}/${long}`) - counts.get(`${key}/${short}`)) / (long - short)]),
  );
}
