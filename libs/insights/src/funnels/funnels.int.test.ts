import { insertEvents, type ClickHouseClient } from '@sightline/clickhouse';
import { createTestStores, testEventRow, type TestStores } from '@sightline/testkit';
import { createTrendsService, type TrendsService } from '../trends/trends.service';
import { parseCorrelationOptions } from './funnel-correlation';
import { parseFunnelFilter } from './funnel-filter';
import { timeToConvertBins, type FunnelStep } from './funnels.query';

/**
 * Funnels against generated journeys on the real ClickHouse engine; the expected numbers come
 * from a plain TypeScript reading of each rule, never from our SQL.
 */
const NOW = Date.parse('2024-01-20T12:00:00Z');
const DAY = 86_400_000;
const FROM = Date.parse('2024-01-06T00:00:00Z');
const STEPS = ['visit', 'signup', 'pay'];

interface Ev {
  event: string;
  t: number;
  person: string;
  plan: string;
}

function random(seed: number) {
  return () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed / 2_147_483_648;
  };
}

function journeys(): Ev[] {
  const next = random(7);
  const out: Ev[] = [];
  for (let p = 0; p < 80; p++) {
    const person = `p${p}`;
    const plan = ['free', 'pro'][p % 2]!;
    let t = FROM + Math.floor(next() * 12 * DAY);
    const n = 1 + Math.floor(next() * 6);
    for (let k = 0; k < n; k++) {
      const r = next();
      const event = r < 0.35 ? 'visit' : r < 0.6 ? 'signup' : r < 0.8 ? 'pay' : r < 0.9 ? 'noise' : 'refund';
      out.push({ event, t, person, plan });
      t += Math.floor(next() * 6 * DAY) + 1000;
    }
  }
  return out;
}

const EVENTS = journeys();
const WINDOW = 7 * DAY;
const TO = Date.parse('2024-01-20T23:59:59.999Z');
/** Each person's events as a funnel reads them: inside the date range only (PostHog's funnel event query). */
const byPerson = () => {
  const map = new Map<string, Ev[]>();
  for (const e of EVENTS.filter((e) => e.t <= TO)) map.set(e.person, [...(map.get(e.person) ?? []), e]);
  for (const list of map.values()) list.sort((a, b) => a.t - b.t);
  return map;
};

/** The median of sorted numbers as PostHog's funnels take it (ClickHouse's median: interpolated). */
const median = (sorted: number[]) => {
  const mid = (sorted.length - 1) / 2;
  return (sorted[Math.floor(mid)]! + sorted[Math.ceil(mid)]!) / 2;
};

/** Ordered: from each first-step start in range, each next step at its first occurrence after the previous, inside the window. */
function orderedChain(events: Ev[]): number[] {
  let best: number[] = [];
  for (const start of events.filter((e) => e.event === STEPS[0] && e.t >= FROM && e.t <= TO)) {
    const times = [start.t];
    for (let i = 1; i < STEPS.length; i++) {
      const next = events.find((e) => e.event === STEPS[i] && e.t >= times[i - 1]! && e.t - start.t <= WINDOW && e.t > times[i - 1]! - 1);
      if (!next) break;
      times.push(next.t);
    }
    // The latest start among those reaching the most steps.
    if (times.length >= best.length) best = times;
  }
  return best;
}

/**
 * PostHog's funnel UDF rule with one exclusion (funnel-udf/src/steps.rs), for journeys whose
 * events are at distinct instants: per level, the chain of the latest start that reached it; an
 * exclusion event in a level's window, before that chain reached the next level, marks it
 * excluded (and the furthest chain, when it is at that level and in its window); an excluded
 * chain goes no further but still counts as the furthest. -1: the furthest chain was excluded,
 * so the person is not in the funnel.
 */
function excludedLevel(events: Ev[], exclusion: { event: string; from: number; to: number }): number {
  const entered: ({ start: number; excluded: boolean } | undefined)[] = [];
  let furthest = { level: 0, start: -1, excluded: false };
  for (const e of events) {
    if (e.event === exclusion.event) {
      for (let level = exclusion.from + 1; level <= exclusion.to; level++) {
        const chain = entered[level];
        if (!chain || chain.excluded || e.t - chain.start > WINDOW || entered[level + 1]?.start === chain.start) continue;
        entered[level] = { ...chain, excluded: true };
        if (furthest.level === level && e.t - furthest.start <= WINDOW) furthest = { ...furthest, excluded: true };
      }
    }
    const level = STEPS.indexOf(e.event) + 1;
    if (level === 0) continue;
    const previous = level === 1 ? (e.t >= FROM && e.t <= TO ? { start: e.t, excluded: false } : undefined) : entered[level - 1];
    if (!previous || e.t - previous.start > WINDOW || entered[level]?.start === previous.start) continue;
    if (!previous.excluded) entered[level] = { ...previous };
    if (level > furthest.level || (level === furthest.level && furthest.excluded)) furthest = { level, ...previous };
  }
  return furthest.excluded ? -1 : furthest.level;
}

/**
 * The ordered rule by position, for any steps (null: any event): from each start in [from, TO],
 * each next step is the first matching event after the previous step's event; the latest start
 * reaching the most steps.
 */
function positionalChain(events: Ev[], steps: (string | null)[], window: number, from: number): number[] {
  let best: number[] = [];
  events.forEach((start, p) => {
    if (start.event !== steps[0] || start.t < from || start.t > TO) return;
    const times = [start.t];
    let at = p;
    for (let i = 1; i < steps.length; i++) {
      const next = events.findIndex((e, q) => q > at && (steps[i] === null || e.event === steps[i]));
      if (next < 0 || events[next]!.t - start.t > window) break;
      times.push(events[next]!.t);
      at = next;
    }
    if (times.length >= best.length) best = times;
  });
  return best;
}

function strictChain(events: Ev[]): number[] {
  let best: number[] = [];
  events.forEach((start, p) => {
    if (start.event !== STEPS[0] || start.t < FROM || start.t > TO) return;
    const times = [start.t];
    for (let i = 1; i < STEPS.length && p + i < events.length; i++) {
      const e = events[p + i]!;
      if (e.event !== STEPS[i] || e.t - start.t > WINDOW) break;
      times.push(e.t);
    }
    // The first chain that reached the most steps.
    if (times.length > best.length) best = times;
  });
  return best;
}

/**
 * PostHog's unordered rule (funnel-udf/src/unordered_steps.rs) for journeys of one step per
 * event: each step queues its times; before an event joins, times out of its window are dropped,
 * and while every step has a time the oldest are dropped; what is held counts whenever times are
 * dropped and after the last event. Counted sets must start (their oldest time) inside the range.
 */
function unorderedLevel(events: Ev[]): number {
  const queues: number[][] = STEPS.map(() => []);
  let best = 0;
  const count = () => {
    const fronts = queues.filter((q) => q.length > 0).map((q) => q[0]!);
    if (fronts.length > best && Math.min(...fronts) <= TO) best = fronts.length;
  };
  const stepEvents = events.filter((e) => STEPS.includes(e.event));
  stepEvents.forEach((e, i) => {
    if (best === STEPS.length) return;
    const before = queues.map((q) => [...q]);
    let dropped = false;
    for (const q of queues)
      while (q.length > 0 && q[0]! < e.t - WINDOW) {
        q.shift();
        dropped = true;
      }
    while (queues.every((q) => q.length > 0)) {
      const oldest = queues.reduce((a, q) => (q[0]! < a[0]! ? q : a));
      oldest.shift();
      dropped = true;
    }
    if (dropped) {
      const saved = queues.map((q) => [...q]);
      queues.splice(0, queues.length, ...before);
      count();
      queues.splice(0, queues.length, ...saved);
    }
    queues[STEPS.indexOf(e.event)]!.push(e.t);
    if (i === stepEvents.length - 1) count();
  });
  return best;
}

const counts = (levels: number[]) => STEPS.map((_, i) => levels.filter((l) => l >= i + 1).length);

describe('funnels on the ClickHouse engine (generated journeys, answers computed independently)', () => {
  let stores: TestStores;
  let ch: ClickHouseClient;
  let service: TrendsService;
  const project = { id: 1, timezone: 'UTC' };
  const run = (body: Record<string, unknown>) =>
    service.runFunnel(
      project,
      parseFunnelFilter({
        events: STEPS.map((id, order) => ({ id, order })),
        date_from: '2024-01-06',
        date_to: '2024-01-20',
        funnel_window_interval: 7,
        ...body,
      }),
      NOW,
    );

  beforeAll(async () => {
    stores = await createTestStores('funnels');
    ch = stores.ch;
    service = createTrendsService({ db: stores.db, ch, cacheTtlMs: 0 });
    await insertEvents(
      ch,
      EVENTS.map((e) =>
        testEventRow({
          event: e.event,
          atMs: e.t,
          distinctId: e.person,
          personId: `00000000-0000-4000-8000-${e.person.slice(1).padStart(12, '0')}`,
          properties: { plan: e.plan },
        }),
      ),
    );
  });
  afterAll(() => stores.close());

  it('ordered: counts each person once at the furthest step, with conversion times', async () => {
    const chains = [...byPerson().values()].map((events) => orderedChain(events)).filter((c) => c.length > 0);
    const answer = (await run({})).result as FunnelStep[];
    expect(answer.map((s) => s.count)).toEqual(counts(chains.map((c) => c.length)));
    expect(answer.map((s) => s.name)).toEqual(STEPS);
    for (let i = 1; i < STEPS.length; i++) {
      const gaps = chains
        .filter((c) => c.length > i)
        .map((c) => (c[i]! - c[i - 1]!) / 1000)
        .sort((a, b) => a - b);
      expect(answer[i]!.average_conversion_time).toBeCloseTo(gaps.reduce((a, b) => a + b, 0) / gaps.length, 3);
      expect(answer[i]!.median_conversion_time).toBeCloseTo(median(gaps), 3);
    }
    expect(answer[0]!.average_conversion_time).toBeNull();
    // Journeys with repeated steps in a row (the runs the query drops all but one of) are part of it.
    const runs = [...byPerson().values()].filter((events) => events.some((e, i) => i > 0 && STEPS.includes(e.event) && e.event === events[i - 1]!.event));
    expect(runs.length).toBeGreaterThan(5);
  });

  it('ordered with a step repeated later (visit → signup → visit → pay): the chain uses a later event for the repeat', async () => {
    const steps = ['visit', 'signup', 'visit', 'pay'];
    const chains = [...byPerson().values()].map((events) => positionalChain(events, steps, 14 * DAY, FROM)).filter((c) => c.length > 0);
    const answer = (await run({ events: steps.map((id, order) => ({ id, order })), funnel_window_interval: 14 })).result as FunnelStep[];
    expect(answer.map((s) => s.count)).toEqual(steps.map((_, i) => chains.filter((c) => c.length >= i + 1).length));
    expect(answer[2]!.count).toBeGreaterThan(0);
    for (let i = 1; i < steps.length; i++) {
      const gaps = chains
        .filter((c) => c.length > i)
        .map((c) => (c[i]! - c[i - 1]!) / 1000)
        .sort((a, b) => a - b);
      if (gaps.length === 0) continue;
      expect(answer[i]!.average_conversion_time).toBeCloseTo(gaps.reduce((a, b) => a + b, 0) / gaps.length, 3);
      // PostHog's median: the mean of the two middle ones of an even count.
      expect(answer[i]!.median_conversion_time).toBeCloseTo(median(gaps), 3);
    }
  });

  it('ordered over years with 18 steps, all but the first any event (times and step bits beyond 64 bits): the same rule', async () => {
    const steps = ['visit', ...Array.from({ length: 17 }, () => null)];
    const from = Date.parse('2019-01-06T00:00:00Z');
    const chains = [...byPerson().values()].map((events) => positionalChain(events, steps, 30 * DAY, from)).filter((c) => c.length > 0);
    const answer = (await run({ events: steps.map((id, order) => ({ id, order })), date_from: '2019-01-06', funnel_window_interval: 30 }))
      .result as FunnelStep[];
    expect(answer.map((s) => s.count)).toEqual(steps.map((_, i) => chains.filter((c) => c.length >= i + 1).length));
    expect(answer[4]!.count).toBeGreaterThan(0);
    const gaps = chains.filter((c) => c.length >= 5).map((c) => (c[4]! - c[3]!) / 1000);
    expect(answer[4]!.average_conversion_time).toBeCloseTo(gaps.reduce((a, b) => a + b, 0) / gaps.length, 3);
    // The start times themselves come back exactly: every journey starts in January 2024.
    const [trend] = (
      await run({
        events: steps.map((id, order) => ({ id, order })),
        date_from: '2019-01-06',
        funnel_window_interval: 30,
        funnel_viz_type: 'trends',
        interval: 'month',
        funnel_to_step: 4,
      })
    ).result as { days: string[]; data: number[] }[];
    const rate = Math.round((chains.filter((c) => c.length >= 5).length / chains.length) * 10_000) / 100;
    expect(trend!.days.filter((_, i) => trend!.data[i] !== 0)).toEqual(['2024-01-01']);
    expect(trend!.data[trend!.days.indexOf('2024-01-01')]).toBe(rate);
  });

  it('correlation: converted and failed actors as the chain rule finds them, with distinct steps and with a repeated step', async () => {
    const funnels: [string[], number][] = [
      [STEPS, 7],
      [['visit', 'signup', 'visit'], 14],
    ];
    for (const [steps, days] of funnels) {
      const window = days * DAY;
      const chains = [...byPerson().values()]
        .map((events) => ({ events, chain: positionalChain(events, steps, window, FROM) }))
        .filter((p) => p.chain.length > 0);
      const expected = new Map<string, { s: number; f: number }>();
      for (const { events, chain } of chains) {
        // PostHog's _get_events_join_query: only events inside the actor's own time in the funnel
        // (after its first step; before its last step, or before its window ends when it dropped off) and the date range.
        const until = chain.length === steps.length ? chain[chain.length - 1]! : chain[0]! + window;
        const names = new Set(events.filter((e) => !steps.includes(e.event) && e.t > chain[0]! && e.t < until && e.t >= FROM && e.t <= TO).map((e) => e.event));
        for (const name of names) {
          const counts = expected.get(name) ?? { s: 0, f: 0 };
          if (chain.length === steps.length) counts.s++;
          else counts.f++;
          expected.set(name, counts);
        }
      }
      const answer = await service.runCorrelation(
        project,
        parseFunnelFilter({ events: steps.map((id, order) => ({ id, order })), date_from: '2024-01-06', date_to: '2024-01-20', funnel_window_interval: days }),
        parseCorrelationOptions({}),
        NOW,
      );
      const found = Object.fromEntries(answer.result.events.map((r) => [r.event.event, { s: r.success_count, f: r.failure_count }]));
      expect(found).toEqual(Object.fromEntries(expected));
      expect(chains.some((p) => p.chain.length === steps.length)).toBe(true);
    }
  });

  it('strict and unordered orders', async () => {
    const people = [...byPerson().values()];
    const strict = (await run({ funnel_order_type: 'strict' })).result as FunnelStep[];
    expect(strict.map((s) => s.count)).toEqual(
      counts(
        people
          .map(strictChain)
          .map((c) => c.length)
          .filter((l) => l > 0),
      ),
    );
    const unordered = (await run({ funnel_order_type: 'unordered' })).result as FunnelStep[];
    expect(unordered.map((s) => s.count)).toEqual(counts(people.map(unorderedLevel).filter((l) => l > 0)));
  });

  it('a shorter window and an exclusion step', async () => {
    const short = (await run({ funnel_window_interval: 2, funnel_window_interval_unit: 'day' })).result as FunnelStep[];
    const people = [...byPerson().values()];
    const withWindow = (events: Ev[], window: number) => {
      let best = 0;
      for (const start of events.filter((e) => e.event === STEPS[0] && e.t >= FROM && e.t <= TO)) {
        let last = start.t;
        let level = 1;
        for (let i = 1; i < STEPS.length; i++) {
          const next = events.find((e) => e.event === STEPS[i] && e.t >= last && e.t - start.t <= window);
          if (!next) break;
          last = next.t;
          level++;
        }
        best = Math.max(best, level);
      }
      return best;
    };
    expect(short.map((s) => s.count)).toEqual(counts(people.map((events) => withWindow(events, 2 * DAY)).filter((l) => l > 0)));
    const excluded = (await run({ exclusions: [{ id: 'refund', type: 'events', funnel_from_step: 0, funnel_to_step: 1 }] })).result as FunnelStep[];
    const levels = people.map((events) => excludedLevel(events, { event: 'refund', from: 0, to: 1 }));
    expect(levels.filter((l) => l < 0).length).toBeGreaterThan(0);
    expect(excluded.map((s) => s.count)).toEqual(counts(levels.filter((l) => l > 0)));
  });

  it('breaks down by the property of the person’s first event (first touch), each value a list as PostHog answers it', async () => {
    const answer = (await run({ breakdown: 'plan' })).result as FunnelStep[][];
    const people = byPerson();
    for (const steps of answer) {
      const chains = [...people.values()]
        .filter((events) => [events.find((e) => STEPS.includes(e.event))?.plan].join() === (steps[0]!.breakdown_value as string[]).join())
        .map((events) => orderedChain(events))
        .filter((c) => c.length > 0);
      expect(steps.map((s) => s.count)).toEqual(counts(chains.map((c) => c.length)));
    }
    expect(answer.map((steps) => steps[0]!.breakdown_value).sort()).toEqual([['free'], ['pro']]);
  });

  it('time to convert: bins of the conversion times from one step to another', async () => {
    const answer = (await run({ funnel_viz_type: 'time_to_convert', funnel_from_step: 0, funnel_to_step: 2, bin_count: 4 })).result as {
      bins: [number, number][];
      average_conversion_time: number;
    };
    const seconds = [...byPerson().values()]
      .map((events) => orderedChain(events))
      .filter((c) => c.length === 3)
      .map((c) => (c[2]! - c[0]!) / 1000);
    expect(answer.bins).toEqual(timeToConvertBins(seconds, 4));
    // Every conversion is in a bin, the closing one included (PostHog's binning).
    expect(answer.bins).toHaveLength(5);
    expect(answer.bins.reduce((a, [, n]) => a + n, 0)).toBe(seconds.length);
    expect(answer.average_conversion_time).toBeCloseTo(seconds.reduce((a, b) => a + b, 0) / seconds.length, 3);
  });

  // PostHog's UDF funnel trends (test_funnel_trends.py test_one_person_in_multiple_periods_and_windows):
  // a person counts in every day on which they started, converted when a start of that day completes.
  it('trends: the conversion rate, per day, of the people who started on that day', async () => {
    const answer = (await run({ funnel_viz_type: 'trends', interval: 'day' })).result as { days: string[]; data: number[] }[];
    const completes = (events: Ev[], start: Ev) => {
      let t = start.t;
      for (let i = 1; i < STEPS.length; i++) {
        const next = events.find((e) => e.event === STEPS[i] && e.t > t && e.t - start.t <= WINDOW);
        if (!next) return false;
        t = next.t;
      }
      return true;
    };
    const [series] = answer;
    let entries = 0;
    series!.days.forEach((day, i) => {
      let entered = 0;
      let converted = 0;
      for (const events of byPerson().values()) {
        const starts = events.filter((e) => e.event === STEPS[0] && e.t >= FROM && e.t <= TO && new Date(e.t).toISOString().slice(0, 10) === day);
        if (starts.length === 0) continue;
        entered++;
        if (starts.some((start) => completes(events, start))) converted++;
      }
      entries += entered;
      expect(series!.data[i]).toBe(entered ? Math.round((converted / entered) * 10_000) / 100 : 0);
    });
    expect(entries).toBeGreaterThan(byPerson().size / 2);
  });

  it('answers no steps with an empty result and refuses bad choices', async () => {
    expect((await service.runFunnel(project, parseFunnelFilter({}), NOW)).result).toEqual([]);
    expect(() => parseFunnelFilter({ events: [{ id: 'a' }, { id: 'b' }], funnel_order_type: 'sideways' })).toThrow(/not a valid choice/);
    expect(() => parseFunnelFilter({ events: [{ id: 'a' }, { id: 'b' }], exclusions: [{ id: 'x', funnel_from_step: 1, funnel_to_step: 0 }] })).toThrow(
      /funnel_to_step/,
    );
  });
});
