import { createServer, type Server, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '@sightline/logger';

export interface RunningServer {
  server: Server;
  port: number;
  /** Stops accepting, lets in-flight requests finish, then drops idle keep-alive sockets. */
  close(): Promise<void>;
}

export async function listen(handler: RequestListener, options: { host: string; port: number }): Promise<RunningServer> {
  const server = createServer({ keepAliveTimeout: 65_000 }, handler);
  // Above the keep-alive timeout so a client never reuses a socket we are about to close.
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

/**
 * Runs `stop` once on SIGTERM/SIGINT, with a hard deadline: an unref'd timer exits the
 * process if the graceful path hangs (a stuck broker, a long query).
 */
export function installShutdown(options: { logger: Logger; deadlineMs: number; stop: () => Promise<void> }): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    options.logger.info({ signal, deadlineMs: options.deadlineMs }, 'shutting down');
    setTimeout(() => {
      options.logger.error('shutdown deadline passed; exiting now');
      process.exit(1);
    }, options.deadlineMs).unref();
    options
      .stop()
      .then(() => {
        options.logger.info('shutdown complete');
        process.exit(0);
      })
      .catch((err: unknown) => {
        options.logger.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
