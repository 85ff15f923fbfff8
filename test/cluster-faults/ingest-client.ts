/**
 * A capture client as an SDK behaves: every event carries its own uuid, and a request answered
 * 503 or cut off (connection refused or reset, no answer) is sent again, with the same uuids,
 * until it is answered 200 or its time is up. Each event is booked under the phase it was sent
 * in; only events answered 200 count as acknowledged.
 */
import { randomUUID } from 'node:crypto';

export interface OutgoingEvent {
  event: string;
  distinct_id: string;
  properties?: Record<string, unknown>;
  uuid?: string;
}

export interface PhaseCounts {
  sent: number;
  acked: number;
  /** Requests sent again after a 503 or a connection error. */
  retries: number;
  /** Events given up on (never answered 200 in time). */
  gaveUp: number;
  /** Answers other than 200, 503 and connection errors: a bug. */
  refused: string[];
}

const RETRY_FOR_MS = 60_000;
const REQUEST_TIMEOUT_MS = 20_000;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class IngestClient {
  /** uuid → phase, for every event answered 200. */
  readonly acked = new Map<string, string>();
  readonly counts = new Map<string, PhaseCounts>();
  phase = 'warm-up';

  constructor(
    private readonly front: string,
    private readonly projectKey: string,
  ) {}

  countsOf(phase: string): PhaseCounts {
    let counts = this.counts.get(phase);
    if (!counts) this.counts.set(phase, (counts = { sent: 0, acked: 0, retries: 0, gaveUp: 0, refused: [] }));
    return counts;
  }

  /** Sends events in one request (/batch/ for several, /i/v0/e/ for one); resolves with whether they were acknowledged. */
  async send(events: OutgoingEvent[]): Promise<boolean> {
    const phase = this.phase;
    const counts = this.countsOf(phase);
    const withUuids = events.map((e) => ({ ...e, uuid: e.uuid ?? randomUUID() }));
    counts.sent += withUuids.length;
    const [path, body] =
      withUuids.length === 1 ? ['/i/v0/e/', { api_key: this.projectKey, ...withUuids[0] }] : ['/batch/', { api_key: this.projectKey, batch: withUuids }];
    const text = JSON.stringify(body);
    const deadline = Date.now() + RETRY_FOR_MS;
    for (let attempt = 0; ; attempt++) {
      if (attempt > 0) counts.retries++;
      let status = 0;
      try {
        const response = await fetch(`${this.front}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: text,
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
        status = response.status;
        const answer = await response.text();
        if (status === 200) {
          for (const e of withUuids) this.acked.set(e.uuid, phase);
          counts.acked += withUuids.length;
          return true;
        }
        if (status !== 503) {
          counts.refused.push(`${status} ${answer.slice(0, 200)}`);
          return false;
        }
      } catch {
        // refused, reset or timed out: the SDKs send it again
      }
      if (Date.now() > deadline) {
        counts.gaveUp += withUuids.length;
        return false;
      }
      await sleep(Math.min(1000, 50 * 2 ** Math.min(attempt, 5)));
    }
  }
}
