import { Worker } from 'node:worker_threads';

export type Lz64Result = { ok: true; text: string } | { ok: false; reason: 'invalid' | 'too_large' };

export interface Lz64DecoderOptions {
  /** Heap of the decoding thread; a payload that needs more is refused (too_large). */
  maxHeapMb?: number;
  /** Longest decode before the thread is stopped and the payload refused (too_large). */
  timeoutMs?: number;
}

// Runs in the worker thread: lz-string's own decoder, with the output size checked there so
// an oversized text is never copied back.
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const LZString = require(${JSON.stringify(require.resolve('lz-string'))});
parentPort.on('message', ({ id, data, maxChars }) => {
  let text = null;
  try { text = LZString.decompressFromBase64(data); } catch { text = null; }
  if (!text) parentPort.postMessage({ id, ok: false, reason: 'invalid' });
  else if (text.length > maxChars) parentPort.postMessage({ id, ok: false, reason: 'too_large' });
  else parentPort.postMessage({ id, ok: true, text });
});
`;

/** A worker with nothing to do is stopped after this long. */
const IDLE_MS = 200;

interface Job {
  id: number;
  data: string;
  maxChars: number;
  resolve: (result: Lz64Result) => void;
  timer?: NodeJS.Timeout;
}

/**
 * lz64 (LZ-String compressToBase64, sent by older posthog-js) decoded with the lz-string
 * package in a worker thread with a heap limit. Its decoder cannot be bounded from outside:
 * a crafted payload of a few hundred KB makes every dictionary entry one character longer than
 * the last and needs memory quadratic in its length. In the main thread that would take the
 * gateway down; here the worker dies (or is stopped at the timeout), the request gets 413, and
 * the next job starts a fresh worker. One worker, one job at a time: lz64 is a legacy encoding.
 */
export function createLz64Decoder(options: Lz64DecoderOptions = {}) {
  const maxHeapMb = options.maxHeapMb ?? 512;
  const timeoutMs = options.timeoutMs ?? 5000;
  const queue: Job[] = [];
  let worker: Worker | undefined;
  let current: Job | undefined;
  let nextId = 0;
  let idleTimer: NodeJS.Timeout | undefined;
  /** The thread the current job was handed to. */
  let runningOn: Worker | undefined;

  const finish = (result: Lz64Result) => {
    const job = current;
    current = undefined;
    if (job) {
      clearTimeout(job.timer);
      job.resolve(result);
    }
    runNext();
  };

  const spawn = () => {
    const w = new Worker(WORKER_SOURCE, { eval: true, resourceLimits: { maxOldGenerationSizeMb: maxHeapMb, maxYoungGenerationSizeMb: 32 } });
    w.unref();
    w.on('message', (result: Lz64Result & { id: number }) => {
      if (current?.id === result.id) finish(result.ok ? { ok: true, text: result.text } : { ok: false, reason: result.reason });
    });
    // ERR_WORKER_OUT_OF_MEMORY, or anything else that kills it: this job's payload is refused.
    w.on('error', () => undefined);
    w.on('exit', () => {
      if (worker === w) worker = undefined;
      // Only the thread running the current job fails it: a thread retired while idle may
      // exit after the next job was handed to its successor.
      if (current && runningOn === w) finish({ ok: false, reason: 'too_large' });
    });
    return w;
  };

  function runNext() {
    if (current) return;
    if (queue.length === 0) {
      // lz64 is rare: do not keep a thread (and its heap) around between requests.
      idleTimer = setTimeout(() => {
        // Forgotten before it is stopped, so a job arriving while it exits starts a fresh thread.
        const idle = worker;
        worker = undefined;
        void idle?.terminate();
      }, IDLE_MS);
      idleTimer.unref();
      return;
    }
    clearTimeout(idleTimer);
    const job = queue.shift()!;
    current = job;
    const fresh = worker === undefined;
    worker ??= spawn();
    const w = worker;
    runningOn = w;
    // The budget is for decoding: a fresh thread's start (slow on a busy machine) does not count.
    const arm = () => {
      if (current === job) job.timer = setTimeout(() => void w.terminate(), timeoutMs);
    };
    if (fresh) w.once('online', arm);
    else arm();
    w.postMessage({ id: job.id, data: job.data, maxChars: job.maxChars });
  }

  return {
    decode(data: string, maxChars: number): Promise<Lz64Result> {
      return new Promise((resolve) => {
        queue.push({ id: nextId++, data, maxChars, resolve });
        runNext();
      });
    },
    async close(): Promise<void> {
      clearTimeout(idleTimer);
      await worker?.terminate();
    },
  };
}

export type Lz64Decoder = ReturnType<typeof createLz64Decoder>;
