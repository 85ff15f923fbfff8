import { ConfigError, parseConfig, type EnvSpec } from './parse-config';
import { appEnvSpecs, requiredInDistributedMode, workerEnv } from './env-specs';

const spec = {
  PORT: { type: 'integer', description: 'port', default: 8000, minimum: 0, maximum: 65535 },
  FLAG: { type: 'boolean', description: 'flag', default: false },
  URL: { type: 'string', description: 'url', pattern: '^https?://' },
  LEVEL: { type: 'string', description: 'level', default: 'info', enum: ['info', 'debug'] },
} as const satisfies EnvSpec;

describe('parseConfig', () => {
  it('applies defaults and coerces types', () => {
    const config = parseConfig(spec, { PORT: '9000', FLAG: 'true' });
    expect(config).toEqual({ PORT: 9000, FLAG: true, LEVEL: 'info' });
  });

  it('treats empty strings as unset', () => {
    expect(parseConfig(spec, { PORT: '', URL: '' })).toEqual({ PORT: 8000, FLAG: false, LEVEL: 'info' });
  });

  it('lists every problem at once', () => {
    let error: unknown;
    try {
      parseConfig(spec, { PORT: 'abc', URL: 'ftp://x', LEVEL: 'loud' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    expect(problems).toMatch(/PORT/);
    expect(problems).toMatch(/URL/);
    expect(problems).toMatch(/LEVEL/);
  });

  it('enforces the required keys of a distributed app', () => {
    expect(() => parseConfig(workerEnv, {}, requiredInDistributedMode.worker)).toThrow(/DATABASE_URL[\s\S]*CLICKHOUSE_URL[\s\S]*KAFKA_BROKERS[\s\S]*REDIS_URL/);
  });

  it('returns a frozen object that ignores unrelated variables', () => {
    const config = parseConfig(spec, { PATH: '/bin', PORT: '1' });
    expect(Object.isFrozen(config)).toBe(true);
    expect(config).not.toHaveProperty('PATH');
  });

  it('parses an empty environment for every app (all-in-one needs nothing)', () => {
    expect(parseConfig(appEnvSpecs['all-in-one'], {}).PORT).toBe(8000);
    for (const spec of Object.values(appEnvSpecs)) expect(() => parseConfig(spec, {})).not.toThrow();
  });
});
