import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A running embedded service leaves this file in its data directory: the embedded stores (PGlite,
 * chdb) belong to one process at a time, so a command that finds a live service goes through it
 * (its URL is here) instead of opening the directory itself.
 */
const MARKER_FILE = 'sightline-service.json';

export interface EmbeddedServiceMarker {
  pid: number;
  /** Where the service answers, e.g. http://127.0.0.1:8000. */
  url: string;
  startedAt: string;
}

export function writeEmbeddedServiceMarker(dataDir: string, marker: Omit<EmbeddedServiceMarker, 'pid' | 'startedAt'>): () => void {
  const path = join(dataDir, MARKER_FILE);
  writeFileSync(path, JSON.stringify({ pid: process.pid, startedAt: new Date().toISOString(), ...marker }));
  return () => rmSync(path, { force: true });
}

/** The service running on this data directory, or null (no marker, or its process is gone). */
export function readEmbeddedServiceMarker(dataDir: string): EmbeddedServiceMarker | null {
  let marker: EmbeddedServiceMarker;
  try {
    marker = JSON.parse(readFileSync(join(dataDir, MARKER_FILE), 'utf8')) as EmbeddedServiceMarker;
  } catch {
    return null;
  }
  try {
    process.kill(marker.pid, 0);
    return marker;
  } catch (error) {
    // EPERM: alive, but another user's process.
    return (error as NodeJS.ErrnoException).code === 'EPERM' ? marker : null;
  }
}
