import { Writable } from 'node:stream';
import { createLogger, LOG_VALUE_LIMITS } from './index';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()));
      done();
    },
  });
  return { lines, logger: createLogger({ service: 'test', destination }) };
}

describe('log lines stay bounded whatever a client sent', () => {
  it('cuts long strings in fields, messages and errors', () => {
    const { lines, logger } = capture();
    const huge = 'k'.repeat(5_000_000);
    logger.warn({ flagKey: huge, err: new Error(`index row too big for ${huge}`) }, `refused ${huge}`);
    const line = JSON.stringify(lines[0]);
    expect(line.length).toBeLessThan(20_000);
    expect(lines[0]!['flagKey']).toBe(`${'k'.repeat(LOG_VALUE_LIMITS.maxStringLength)}…[${5_000_000 - LOG_VALUE_LIMITS.maxStringLength} more characters]`);
    expect((lines[0]!['err'] as { message: string; type: string }).type).toBe('Error');
    expect((lines[0]!['err'] as { message: string }).message).toMatch(/^index row too big for k+…\[\d+ more characters\]$/);
    expect(String(lines[0]!['msg'])).toMatch(/^refused k+…\[\d+ more characters\]$/);
  });

  it('bounds deep and wide values and keeps redaction', () => {
    const { lines, logger } = capture();
    let deep: unknown = 'leaf';
    for (let i = 0; i < 10_000; i++) deep = { d: deep };
    logger.info({ deep, list: Array.from({ length: 1000 }, (_, i) => i), headers: { authorization: 'Bearer phx_secret' } }, 'hostile');
    expect(JSON.stringify(lines[0]).length).toBeLessThan(5_000);
    expect((lines[0]!['list'] as unknown[]).length).toBe(LOG_VALUE_LIMITS.maxArrayItems + 1);
    expect(JSON.stringify(lines[0])).toContain('[nested too deep to log]');
    expect(JSON.stringify(lines[0])).not.toContain('phx_secret');
  });
});
