import { encodeIngestMessage, normalizeEvent, type RawEvent } from '@sightline/ingestion';

/** A bus message as the gateway would produce it for team 1. */
export function busMessage(
  raw: RawEvent,
  options: { token: string; teamId?: number | null; nowMs?: number; ip?: string | null; historicalMigration?: boolean },
): { key: string; value: Buffer; uuid: string } {
  const r = normalizeEvent(raw, {
    token: options.token,
    teamId: options.teamId === undefined ? 1 : options.teamId,
    nowMs: options.nowMs ?? Date.now(),
    sentAt: null,
    ip: options.ip ?? null,
    historicalMigration: options.historicalMigration ?? false,
  });
  if (!r.ok) throw new Error(r.reason);
  return { key: r.key, value: encodeIngestMessage(r.message), uuid: r.message.uuid };
}
