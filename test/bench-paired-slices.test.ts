// bench:worker's comparison (bench/paired-slices.ts): the worker's slices against the raw
// baseline's slices of the same events, warm-up pair left out of both sides, ratio the median of
// the pairs' ratios.
import { pairRun, rawGoesFirst } from '../bench/paired-slices';

const slice = (count: number, ms: number) => ({ count, ms });

describe('pairRun', () => {
  it('leaves the first pair out of both sides', () => {
    // A cold first pair: the raw side slow (fresh table), the worker slower still (JIT).
    const run = pairRun([
      { raw: slice(20_000, 400), worker: slice(20_000, 2_000) },
      { raw: slice(20_000, 100), worker: slice(20_000, 200) },
      { raw: slice(20_000, 100), worker: slice(20_000, 250) },
    ]);
    expect(run.pairs).toBe(2);
    expect(run.ratios).toEqual([0.5, 0.4]);
    expect(run.rawRate).toBeCloseTo(200_000);
    expect(run.workerRate).toBeCloseTo(40_000 / 0.45);
  });

  it("takes the median of the pairs' ratios, so one disturbed slice moves one pair only", () => {
    // Pair 3's raw slice was hit by a 300 ms pause: its ratio is an outlier, the median is not.
    const run = pairRun(
      [
        { raw: slice(20_000, 100), worker: slice(20_000, 200) },
        { raw: slice(20_000, 100), worker: slice(20_000, 210) },
        { raw: slice(20_000, 400), worker: slice(20_000, 200) },
        { raw: slice(20_000, 100), worker: slice(20_000, 190) },
      ],
      0,
    );
    expect(run.ratios.map((r) => r.toFixed(3))).toEqual(['0.500', '0.476', '2.000', '0.526']);
    expect(run.ratio).toBeCloseTo((0.5 + 0.526) / 2, 2);
    // The summed rates still carry the pause: they are printed beside the ratio, not used for it.
    expect(run.rawRate).toBeCloseTo(80_000 / 0.7);
  });

  it('refuses a run with nothing left to measure', () => {
    expect(() => pairRun([{ raw: slice(1, 1), worker: slice(1, 1) }])).toThrow(/more than 1 slice pair/);
  });
});

describe('rawGoesFirst', () => {
  it('alternates which side runs first', () => {
    expect([0, 1, 2, 3].map(rawGoesFirst)).toEqual([true, false, true, false]);
  });
});
