import { Redis } from 'ioredis';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { Client } from 'pg';
import { createTestPostgresDatabase, pauseKafka, resumeKafka, startProcess, testServices, uniqueName, waitFor, freePort } from './index';

describe('shared integration test services', () => {
  it('serves Redis', async () => {
    const redis = new Redis(testServices().redisUrl, { lazyConnect: true });
    try {
      await redis.connect();
      expect(await redis.ping()).toBe('PONG');
      const key = uniqueName('testkit');
      await redis.set(key, 'value');
      expect(await redis.get(key)).toBe('value');
    } finally {
      redis.disconnect();
    }
  });

  it('creates and drops fresh PostgreSQL databases', async () => {
    const db = await createTestPostgresDatabase('testkit');
    const client = new Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query('CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL)');
      await client.query("INSERT INTO items VALUES (1, 'one'), (2, 'two')");
      const { rows } = await client.query('SELECT current_database() AS db, count(*)::int AS n FROM items');
      expect(rows).toEqual([{ db: db.database, n: 2 }]);
    } finally {
      await client.end();
    }
    await db.drop();

    const admin = new Client({ connectionString: testServices().postgresAdminUrl });
    await admin.connect();
    try {
      const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [db.database]);
      expect(rowCount).toBe(0);
    } finally {
      await admin.end();
    }
  });

  describe('Kafka mock cluster', () => {
    const { kafkaBrokers } = testServices();
    // Short timeouts and no retries so that an outage surfaces quickly.
    const kafka = new Kafka({
      clientId: uniqueName('testkit'),
      brokers: kafkaBrokers,
      logLevel: logLevel.NOTHING,
      connectionTimeout: 1000,
      requestTimeout: 1500,
      retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 500 },
    });
    let producer: Producer;

    beforeAll(async () => {
      producer = kafka.producer({ idempotent: false, allowAutoTopicCreation: true });
      await producer.connect();
    });

    afterAll(async () => {
      await producer.disconnect();
    });

    it('has three brokers', () => {
      expect(kafkaBrokers).toHaveLength(3);
    });

    it('delivers produced messages to a consumer group', async () => {
      const topic = uniqueName('testkit-topic');
      await producer.send({
        topic,
        acks: -1,
        messages: [
          { key: 'a', value: 'first' },
          { key: 'b', value: 'second' },
        ],
      });

      const consumer = kafka.consumer({ groupId: uniqueName('testkit-group'), sessionTimeout: 10_000, heartbeatInterval: 500 });
      const received: string[] = [];
      await consumer.connect();
      try {
        await consumer.subscribe({ topic, fromBeginning: true });
        await consumer.run({
          eachMessage: async ({ message }) => {
            received.push(`${message.key?.toString()}=${message.value?.toString()}`);
          },
        });
        await waitFor(() => received.length >= 2, { timeoutMs: 30_000, description: 'both messages' });
        expect(received.sort()).toEqual(['a=first', 'b=second']);
      } finally {
        await consumer.disconnect();
      }
    });

    it('fails to produce while paused and recovers once resumed', async () => {
      const topic = uniqueName('testkit-outage');
      await producer.send({ topic, acks: -1, messages: [{ value: 'before' }] });

      pauseKafka();
      try {
        await expect(producer.send({ topic, acks: -1, timeout: 1000, messages: [{ value: 'during' }] })).rejects.toThrow();
      } finally {
        resumeKafka();
      }

      await waitFor(() => producer.send({ topic, acks: -1, messages: [{ value: 'after' }] }), {
        timeoutMs: 20_000,
        intervalMs: 250,
        description: 'producing after the outage',
      });
    });
  });

  describe('startProcess', () => {
    const server = (port: number) =>
      `require('http').createServer((_, res) => res.end('ok')).listen(${port}, '127.0.0.1', () => console.log('listening on ${port}'));`;

    it('waits for a ready pattern, collects output and stops the process', async () => {
      const port = await freePort();
      const started = await startProcess(process.execPath, ['-e', server(port)], { readyPattern: /listening on \d+/ });
      expect(started.output()).toContain(`listening on ${port}`);
      expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('ok');
      await started.stop();
      expect(started.proc.signalCode).toBe('SIGTERM');
    });

    it('waits for a ready URL and passes the environment', async () => {
      const port = await freePort();
      const started = await startProcess(process.execPath, ['-e', `console.log(process.env.GREETING); ${server(port)}`], {
        env: { GREETING: 'hello from env' },
        readyUrl: `http://127.0.0.1:${port}/`,
      });
      await waitFor(() => started.output().includes('hello from env'), { timeoutMs: 2000 });
      started.kill('SIGKILL');
      await waitFor(() => started.proc.signalCode === 'SIGKILL', { timeoutMs: 2000 });
    });

    it('rejects with the output when the process exits before it is ready', async () => {
      await expect(startProcess(process.execPath, ['-e', "console.error('boom: bad config'); process.exit(3)"], { readyPattern: 'never' })).rejects.toThrow(
        /exited early \(code 3[\s\S]*boom: bad config/,
      );
    });
  });
});
