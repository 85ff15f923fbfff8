/**
 * Simulated Kafka outages: the whole mock cluster lives in the kcat process, so
 * SIGSTOP freezes every broker (connections stay open, nothing answers) and
 * SIGCONT brings them back.
 */
import fs from 'node:fs';
import { readServicesFile } from './service-info';

const SETTLE_TIMEOUT_MS = 2000;

/** States of all threads of `pid` (from /proc), or undefined where there is no /proc. */
function threadStates(pid: number): string[] | undefined {
  try {
    return fs.readdirSync(`/proc/${pid}/task`).map((tid) => {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      return stat.charAt(stat.lastIndexOf(')') + 2);
    });
  } catch {
    return undefined;
  }
}

/** Blocks the thread briefly without spinning (these helpers are synchronous by design). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Signal delivery is asynchronous: right after kill(SIGSTOP) the brokers may
 * still answer a request already on the wire. Wait until every thread has
 * actually stopped (or resumed).
 */
function waitForThreads(pid: number, stopped: boolean): void {
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  for (;;) {
    const states = threadStates(pid);
    if (!states || states.every((s) => (s === 'T') === stopped)) return;
    if (Date.now() > deadline) {
      throw new Error(`Kafka mock (pid ${pid}) did not ${stopped ? 'stop' : 'resume'} within ${SETTLE_TIMEOUT_MS} ms: ${states.join('')}`);
    }
    sleepSync(1);
  }
}

/**
 * Simulates a Kafka outage by freezing the mock cluster; returns once it is
 * frozen. It is shared by every test file running at the time, so always pair
 * it with `resumeKafka()` in a `finally`.
 */
export function pauseKafka(): void {
  const { kcatPid } = readServicesFile();
  process.kill(kcatPid, 'SIGSTOP');
  waitForThreads(kcatPid, true);
}

/** Ends a `pauseKafka()` outage; returns once the mock cluster runs again. */
export function resumeKafka(): void {
  const { kcatPid } = readServicesFile();
  process.kill(kcatPid, 'SIGCONT');
  waitForThreads(kcatPid, false);
}
