import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Express } from 'express';
import type { Logger } from '@sightline/logger';
import type { Metrics } from '@sightline/metrics';
import { errors, type ApiError } from './api-error';

/** What a fast path gets from the app it runs in front of. */
export interface FastPathFrame {
  /** The `app` metric label. */
  app: string;
  logger: Logger;
  metrics: Metrics;
  /** The Express app the fast path runs in front of: its request and response prototypes and settings ('trust proxy', the query parser). */
  express: Express;
}

/**
 * Answers some requests on the bare node:http objects before Express sees them (the hottest
 * public endpoints, where Express's per-request work is a measurable share); answers false for
 * any request it does not take, which Express then handles as usual. It must decide before
 * reading the body.
 */
export type FastPath = (req: IncomingMessage, res: ServerResponse) => boolean;
export type FastPathFactory = (frame: FastPathFrame) => FastPath;

/** A JSON answer as Express's res.json writes it. */
export function writeJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  writeJsonText(res, status, JSON.stringify(body), headers);
}

/** writeJson for an answer already written as JSON text. */
export function writeJsonText(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/** The DRF error shape, as the service app's error handler answers it. */
export function writeApiError(res: ServerResponse, error: ApiError): void {
  if (res.headersSent) return;
  writeJson(res, error.status, error.toBody(), error.headers);
}

/**
 * The request body, at most `limit` bytes (a larger one is refused with the 413 Express's body
 * readers give, before it is read when Content-Length announces it). Resolves null when the
 * client went away before sending all of it.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const announced = Number(req.headers['content-length']);
    if (Number.isFinite(announced) && announced > limit) {
      req.resume();
      return reject(errors.payloadTooLarge(limit));
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    req.on('data', (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > limit) {
        settled = true;
        req.resume();
        return reject(errors.payloadTooLarge(limit));
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!settled) resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
      settled = true;
    });
    req.on('aborted', () => {
      if (!settled) resolve(null);
      settled = true;
    });
    req.on('error', () => {
      if (!settled) resolve(null);
      settled = true;
    });
  });
}
