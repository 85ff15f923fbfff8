/**
 * The read side of the fault test's load: decide calls and trend queries through the front,
 * each answer booked under the phase it was asked in. Decide is never retried by the client:
 * every answer that is not 200 counts.
 */
export interface ReadCounts {
  ok: number;
  failed: string[];
}

export interface ReadLoad {
  decide: Map<string, ReadCounts>;
  trends: Map<string, ReadCounts>;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function runReads(options: {
  front: string;
  projectKey: string;
  personalKey: string;
  distinctIds: () => string[];
  phase: () => string;
  decideEveryMs: number;
  trendEveryMs: number;
}): ReadLoad {
  let running = true;
  const decide = new Map<string, ReadCounts>();
  const trends = new Map<string, ReadCounts>();
  const book = (map: Map<string, ReadCounts>, phase: string, outcome: true | string) => {
    let counts = map.get(phase);
    if (!counts) map.set(phase, (counts = { ok: 0, failed: [] }));
    if (outcome === true) counts.ok++;
    else counts.failed.push(outcome);
  };
  const loop = async (everyMs: number, ask: () => Promise<Response>, map: Map<string, ReadCounts>) => {
    while (running) {
      const phase = options.phase();
      try {
        const response = await ask();
        const body = await response.text();
        book(map, phase, response.status === 200 ? true : `${response.status} ${body.slice(0, 160)}`);
      } catch (error) {
        book(map, phase, `no answer: ${error instanceof Error ? error.message : String(error)}`);
      }
      await sleep(everyMs);
    }
  };
  const ids = () => {
    const all = options.distinctIds();
    return all[Math.floor(Math.random() * all.length)] ?? 'nobody';
  };
  const loops = [
    loop(
      options.decideEveryMs,
      () =>
        fetch(`${options.front}/decide/?v=3`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ api_key: options.projectKey, distinct_id: ids() }),
          signal: AbortSignal.timeout(15_000),
        }),
      decide,
    ),
    loop(
      options.trendEveryMs,
      () =>
        fetch(`${options.front}/api/environments/1/insights/trend/`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${options.personalKey}` },
          body: JSON.stringify({
            events: [
              { id: '$pageview', math: 'total' },
              { id: '$pageview', math: 'dau' },
            ],
            refresh: true,
          }),
          signal: AbortSignal.timeout(60_000),
        }),
      trends,
    ),
  ];
  return {
    decide,
    trends,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}
