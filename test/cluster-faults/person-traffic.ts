/**
 * The mixed capture load of the fault test: many users, each an anonymous id that gets
 * pageviews with `$set`, later an `$identify` to its user id and a `$create_alias` to a third
 * id, sent as batches and single events. What was acknowledged decides which of a user's ids
 * must end on one person.
 */
import { Partitioners } from 'kafkajs';
import type { IngestClient, OutgoingEvent } from './ingest-client';

export interface TrafficUser {
  anon: string;
  user: string;
  alias: string;
  identified: 'no' | 'sent' | 'acked';
  aliased: 'no' | 'sent' | 'acked';
}

/** The partition a distinct id's events go to: the gateway keys them `token:distinct_id`, kafkajs's default partitioner hashes the key. */
export function partitionOf(token: string, distinctId: string, partitions: number): number {
  const partitioner = Partitioners.DefaultPartitioner();
  return partitioner({
    topic: 'events',
    partitionMetadata: Array.from({ length: partitions }, (_, partitionId) => ({ partitionId, leader: 0, partitionErrorCode: 0, replicas: [0], isr: [0] })),
    message: { key: `${token}:${distinctId}`, value: '' },
  });
}

export class PersonTraffic {
  readonly users: TrafficUser[];
  private seq = 0;

  constructor(prefix: string, count: number) {
    this.users = Array.from({ length: count }, (_, i) => ({
      anon: `${prefix}-anon-${i}`,
      user: `${prefix}-user-${i}`,
      alias: `${prefix}-alias-${i}`,
      identified: 'no',
      aliased: 'no',
    }));
  }

  private pick(): TrafficUser {
    return this.users[Math.floor(Math.random() * this.users.length)]!;
  }

  private pageview(u: TrafficUser): OutgoingEvent {
    const n = this.seq++;
    // Once identified, events come from the user id (as posthog-js does after identify).
    const distinctId = u.identified === 'acked' && n % 2 === 0 ? u.user : u.anon;
    return { event: '$pageview', distinct_id: distinctId, properties: { $set: { last_seq: n }, $set_once: { first_seq: n } } };
  }

  /** One request's worth: mostly a batch of pageviews, sometimes an identify or an alias. */
  async sendNext(client: IngestClient): Promise<void> {
    const roll = Math.random();
    if (roll < 0.15) {
      const u = this.users.find((x) => x.identified === 'no');
      if (u) {
        u.identified = 'sent';
        const ok = await client.send([
          { event: '$identify', distinct_id: u.user, properties: { $anon_distinct_id: u.anon, $set: { email: `${u.user}@example.com` } } },
        ]);
        u.identified = ok ? 'acked' : 'sent';
        return;
      }
    }
    if (roll < 0.25) {
      const u = this.users.find((x) => x.identified === 'acked' && x.aliased === 'no');
      if (u) {
        u.aliased = 'sent';
        const ok = await client.send([{ event: '$create_alias', distinct_id: u.user, properties: { alias: u.alias } }]);
        u.aliased = ok ? 'acked' : 'sent';
        return;
      }
    }
    if (roll < 0.35) {
      await client.send([this.pageview(this.pick())]);
      return;
    }
    await client.send(Array.from({ length: 10 }, () => this.pageview(this.pick())));
  }

  /** Distinct ids of each user that must share one person (only what was acknowledged). */
  expectedGroups(): string[][] {
    return this.users.map((u) => [u.anon, ...(u.identified === 'acked' ? [u.user] : []), ...(u.aliased === 'acked' ? [u.alias] : [])]);
  }
}

/** `loops` request loops sending `traffic` through `client` until stopped. */
export function runLoad(client: IngestClient, traffic: PersonTraffic, options: { loops: number; pauseMs: number }): { stop(): Promise<void> } {
  let running = true;
  const loops = Array.from({ length: options.loops }, async () => {
    while (running) {
      await traffic.sendNext(client);
      await new Promise((resolve) => setTimeout(resolve, options.pauseMs));
    }
  });
  return {
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}
