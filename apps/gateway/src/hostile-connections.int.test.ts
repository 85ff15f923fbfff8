/**
 * Clients that hold connections open, trickle bodies, or send what Node's HTTP parser refuses,
 * on real sockets: none of them may crowd out ordinary captures, and every answer the server
 * sends is the JSON error shape.
 */
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { jsonBody, rawRequest, startTestGateway, TEST_TOKEN, type TestGateway } from './test-support';

interface RawExchange {
  /** Everything the server sent before closing the socket. */
  text: string;
  status: number;
  body: unknown;
}

/** Writes `chunks` to a fresh socket (waiting `gapMs` between them) and reads until the server closes it. */
function exchange(port: number, chunks: (string | Buffer)[], gapMs = 0): Promise<RawExchange> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    let stopped = false;
    socket.on('data', (chunk) => received.push(chunk));
    socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' || error.code === 'EPIPE' ? undefined : reject(error)));
    socket.on('close', () => {
      stopped = true;
      const text = Buffer.concat(received).toString('utf8');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      const bodyText = text.slice(text.indexOf('\r\n\r\n') + 4);
      let body: unknown = null;
      try {
        body = JSON.parse(bodyText);
      } catch {
        body = bodyText;
      }
      resolve({ text, status, body });
    });
    void (async () => {
      for (const chunk of chunks) {
        if (stopped) return;
        socket.write(chunk);
        if (gapMs > 0) await sleep(gapMs);
      }
    })();
  });
}

const drfShape = { type: expect.any(String), code: expect.any(String), detail: expect.any(String), attr: null };
const batchHead = (length: number) => `POST /batch/ HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
const capture = (gateway: TestGateway, body: unknown = { api_key: TEST_TOKEN, event: 'ok', distinct_id: 'u' }) =>
  rawRequest(gateway.port, { path: '/capture/', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

describe('gateway against hostile connections', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway({ maxInflightRequests: 50, timeouts: { headersMs: 1_000, requestMs: 3_000, bodyIdleMs: 1_000 } });
  });
  afterAll(() => gateway.close());

  it('2,000 connections holding a partial /batch/ body take no in-flight slot; a capture still answers 200 (row 3)', async () => {
    // Each socket's answer is collected from the moment it connects: on a loaded machine the
    // body-idle timeout can close some of them before the capture below has been answered.
    const held = await Promise.all(
      Array.from(
        { length: 2_000 },
        () =>
          new Promise<{ socket: net.Socket; closed: Promise<string> }>((resolve, reject) => {
            const data: Buffer[] = [];
            const socket = net.connect(gateway.port, '127.0.0.1', () => {
              socket.write(`${batchHead(100)}{"batch":[`);
              resolve({ socket, closed });
            });
            const closed = new Promise<string>((resolveClosed) => socket.on('close', () => resolveClosed(Buffer.concat(data).toString('utf8'))));
            socket.on('data', (chunk) => data.push(chunk));
            socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? undefined : reject(error)));
          }),
      ),
    );
    try {
      const answer = await capture(gateway);
      expect([answer.status, answer.text]).toEqual([200, '{"status":1}']);
      // Every stalled upload is then answered 408 and closed by the body-idle timeout.
      const closed = await Promise.all(held.map(({ closed }) => closed));
      expect(closed.filter((text) => !text.startsWith('HTTP/1.1 408'))).toEqual([]);
      expect(JSON.parse(closed[0]!.slice(closed[0]!.indexOf('\r\n\r\n') + 4))).toMatchObject({ code: 'request_timeout' });
    } finally {
      held.forEach(({ socket }) => socket.destroy());
    }
  });

  it('cuts off a body trickling in without pausing long enough to be idle (row 3)', async () => {
    const body = '{"api_key":"phc_known_token","event":"slow","distinct_id":"u"}'.padEnd(100, ' ');
    const chunks = [batchHead(100), ...body.split('')];
    const answer = await exchange(gateway.port, chunks, 150);
    expect(answer.status).toBe(408);
    expect(answer.body).toEqual({ ...drfShape, type: 'invalid_request', code: 'request_timeout', detail: 'The request was not received in time.' });
    expect(gateway.received().some((m) => m.value.event === 'slow')).toBe(false);
  });

  it('cuts off a client that stops inside its headers', async () => {
    const answer = await exchange(gateway.port, ['POST /batch/ HTTP/1.1\r\nHost: local']);
    expect(answer.status).toBe(408);
    expect(answer.body).toMatchObject({ code: 'request_timeout' });
  });

  it('leaves an idle keep-alive connection open past the headers timeout, for its next request', async () => {
    const socket = net.connect(gateway.port, '127.0.0.1');
    const texts: string[] = [];
    socket.on('data', (chunk) => texts.push(chunk.toString('utf8')));
    const body = JSON.stringify({ api_key: TEST_TOKEN, event: 'keepalive', distinct_id: 'u' });
    const request = `POST /capture/ HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    socket.write(request);
    await sleep(2_000); // past headersMs and bodyIdleMs, within the keep-alive timeout
    socket.write(request);
    await sleep(300);
    socket.destroy();
    expect(texts.join('').match(/HTTP\/1\.1 200/g)).toHaveLength(2);
  });

  it.each([
    ['a garbage request line', ['GARBAGE\r\n\r\n'], 400],
    ['an over-long URL', [`GET /${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`], 431],
    ['an over-long header', [`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`], 431],
    [
      'both Content-Length and Transfer-Encoding',
      ['POST /batch/ HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
      400,
    ],
  ])('answers %s with the JSON error shape (row 11)', async (_what, chunks, status) => {
    const answer = await exchange(gateway.port, chunks);
    expect(answer.status).toBe(status);
    expect(answer.text).toContain('Content-Type: application/json');
    expect(answer.body).toEqual(drfShape);
  });

  it('drops an event nested 10,000 levels deep and keeps the rest of the batch (row 7)', async () => {
    const deep = `${'['.repeat(10_000)}1${']'.repeat(10_000)}`;
    const body = `{"api_key":"${TEST_TOKEN}","batch":[{"event":"deep","distinct_id":"u","properties":{"v":${deep}}},{"event":"shallow","distinct_id":"u"}]}`;
    const answer = await rawRequest(gateway.port, { path: '/batch/', headers: { 'Content-Type': 'application/json' }, body });
    expect([answer.status, JSON.parse(answer.text)]).toEqual([200, { status: 1, dropped: [{ index: 0, reason: 'nested_too_deeply' }] }]);
    const events = gateway.received().map((m) => m.value.event);
    expect(events).toContain('shallow');
    expect(events).not.toContain('deep');
    const dropped = (await gateway.metrics.eventsDropped.get()).values.find((v) => v.labels['reason'] === 'nested_too_deeply');
    expect(dropped?.value).toBe(1);
  });

  it('answers a NUL in the project key with 401, not a 500', async () => {
    const answer = await capture(gateway, { api_key: 'phc_\u0000', event: 'e', distinct_id: 'u' });
    expect(answer.status).toBe(401);
    expect(jsonBody(answer)).toMatchObject({ type: 'authentication_error' });
  });
});
