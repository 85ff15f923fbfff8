import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeSdkBody, type SdkRequest } from './sdk-requests';

export interface RecordingProxy {
  /** `http://127.0.0.1:<port>`: give this to the SDK as its host. */
  base: string;
  /** Every request that came through, in arrival order, with the service's status. */
  requests: SdkRequest[];
  close(): Promise<void>;
}

/**
 * An HTTP relay in front of the service that writes down every request an SDK sends and the
 * status the service answered, byte for byte unchanged in both directions. It sees what a page
 * cannot report itself: CORS preflights and sendBeacon posts made while the page unloads.
 */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const upstream = new URL(target);
  const requests: SdkRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const contentType = req.headers['content-type'] ?? '';
      const contentEncoding = req.headers['content-encoding'] ?? '';
      const entry: SdkRequest = { method: req.method ?? 'GET', path: req.url ?? '/', status: 'no response', contentType, contentEncoding, body: null };
      try {
        entry.body = decodeSdkBody(raw, contentType);
      } catch (error) {
        entry.body = { undecodable: String(error) };
      }
      requests.push(entry);
      const headers: IncomingHttpHeaders = { ...req.headers, host: upstream.host };
      const forward = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers }, (answer) => {
        entry.status = answer.statusCode ?? 'no response';
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      forward.on('error', () => {
        entry.status = 'failed';
        res.destroy();
      });
      forward.end(raw);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
