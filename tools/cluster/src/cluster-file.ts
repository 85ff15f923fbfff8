/**
 * DIR/cluster.json: what `npm run start:cluster` started (the front address, the keys, every
 * process with its role, pid and port) and how to reach the running command (`controller`)
 * to add or stop a process. Rewritten after every change; readable only by its owner (it holds
 * the keys and the controller's token).
 */
import fs from 'node:fs';
import path from 'node:path';

export const APP_ROLES = ['gateway', 'worker', 'api'] as const;
export type AppRole = (typeof APP_ROLES)[number];

export interface ClusterKeys {
  /** phc_…: SDKs (capture and flags). */
  projectApiKey: string;
  /** phx_…: Authorization: Bearer … on /api/. */
  personalApiKey: string;
}

export interface ClusterProcessInfo {
  /** `gateway:2`, `worker:1`, … for the apps; the service's name (`postgres`, `nginx`, …) otherwise. */
  name: string;
  role: AppRole | string;
  pid: number;
  port?: number;
  url?: string;
  log: string;
  state: 'starting' | 'running' | 'exited' | 'stopped';
  /** How it ended (`code 0`, `signal SIGKILL`), once it has. */
  exit?: string;
}

export interface ClusterFile {
  frontUrl: string;
  dir: string;
  keys: ClusterKeys;
  partitions: number;
  /** The stores' addresses, as the apps get them (DATABASE_URL, REDIS_URL, KAFKA_BROKERS, CLICKHOUSE_URL, …). */
  env: Record<string, string>;
  /** The running `start:cluster` command: its pid and its control address; null once it stopped. */
  controller: { pid: number; url: string; token: string } | null;
  processes: ClusterProcessInfo[];
}

export const clusterFilePath = (dir: string) => path.join(path.resolve(dir), 'cluster.json');

export function readClusterFile(dir: string): ClusterFile | undefined {
  const file = clusterFilePath(dir);
  if (!fs.existsSync(file)) return undefined;
  return JSON.parse(fs.readFileSync(file, 'utf8')) as ClusterFile;
}
