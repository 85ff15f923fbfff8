import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ServedPage {
  contentType: string;
  body: string | Buffer;
}

export interface PageServer {
  /** `http://127.0.0.1:<port>`: another origin than the service under test. */
  origin: string;
  close(): Promise<void>;
}

/** A tiny site on its own loopback port, so a page's requests to the service are cross-origin. */
export async function startPageServer(pages: Record<string, ServedPage>): Promise<PageServer> {
  const server: Server = createServer((req, res) => {
    const page = pages[(req.url ?? '/').split('?')[0]!];
    if (!page) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': page.contentType, 'cache-control': 'no-store' }).end(page.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
