/**
 * How bench/worker.ts compares the worker with its raw baseline: both handle the same slices of
 * a run's events, alternately, and each worker slice is compared with the raw slice of the same
 * events beside it. The first pair warms both up (JIT, sockets, fresh tables) and is left out of
 * both sides; which side goes first alternates from pair to pair, so neither always runs right
 * after the other's writes. A run's ratio is the median of its pairs' ratios: a pause that hits
 * one slice (a garbage collection, another process on the machine) moves one pair, not the run.
 */
import { median } from './bench-process';

/** One slice's timed work: how many events or rows, and the wall time it took. */
export interface TimedSlice {
  count: number;
  ms: number;
}

export interface SlicePair {
  raw: TimedSlice;
  worker: TimedSlice;
}

export interface PairedRun {
  /** worker rate ÷ raw rate per measured pair, in slice order. */
  ratios: number[];
  /** Median of `ratios`: the run's ratio. */
  ratio: number;
  /** Rows (or events) per second over the measured slices of each side. */
  rawRate: number;
  workerRate: number;
  /** Pairs measured (the warm-up left out). */
  pairs: number;
}

/** Which side of pair `index` runs first: the raw baseline in even pairs, the worker in odd ones. */
export function rawGoesFirst(index: number): boolean {
  return index % 2 === 0;
}

const rate = (s: TimedSlice) => s.count / (s.ms / 1000);

/** Pairs a run's slices, leaving out the first `warmUp` pairs of both sides. */
export function pairRun(pairs: readonly SlicePair[], warmUp = 1): PairedRun {
  const measured = pairs.slice(warmUp);
  if (measured.length === 0) throw new Error(`a run needs more than ${warmUp} slice pair(s) to measure any`);
  const ratios = measured.map((p) => rate(p.worker) / rate(p.raw));
  const sum = (side: 'raw' | 'worker', key: keyof TimedSlice) => measured.reduce((total, p) => total + p[side][key], 0);
  return {
    ratios,
    ratio: median(ratios),
    rawRate: sum('raw', 'count') / (sum('raw', 'ms') / 1000),
    workerRate: sum('worker', 'count') / (sum('worker', 'ms') / 1000),
    pairs: measured.length,
  };
}
