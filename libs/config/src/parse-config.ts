import Ajv, { type ErrorObject } from 'ajv';

/** One environment variable: its JSON-schema type and documentation. */
export interface EnvVarSpec {
  type: 'string' | 'integer' | 'boolean';
  description: string;
  default?: string | number | boolean;
  minimum?: number;
  maximum?: number;
  enum?: readonly string[];
  pattern?: string;
  /** Never printed in logs or errors. */
  secret?: boolean;
}

export type EnvSpec = Readonly<Record<string, EnvVarSpec>>;

type ValueOf<S extends EnvVarSpec> = S['type'] extends 'integer' ? number : S['type'] extends 'boolean' ? boolean : string;

/** The parsed configuration: keys with a default are always present, the others optional. */
export type ConfigOf<E extends EnvSpec> = Readonly<
  { [K in keyof E as E[K] extends { default: unknown } ? K : never]: ValueOf<E[K]> } & {
    [K in keyof E as E[K] extends { default: unknown } ? never : K]?: ValueOf<E[K]>;
  }
>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

const ajv = new Ajv({ allErrors: true, coerceTypes: true, useDefaults: true, strict: true });

function describe(error: ErrorObject): string {
  const name = error.instancePath.replace(/^\//, '') || String(error.params['missingProperty'] ?? '');
  return `${name}: ${error.message ?? 'is invalid'}`;
}

/**
 * Validates an environment against a spec, once, at start-up. Empty strings count as unset
 * (so `FOO=` in a .env file falls back to the default). Every problem is listed at once;
 * the result is frozen.
 */
export function parseConfig<E extends EnvSpec, R extends keyof E & string = never>(
  spec: E,
  env: NodeJS.ProcessEnv,
  required: readonly R[] = [],
): ConfigOf<E> & { readonly [K in R]-?: ValueOf<E[K]> } {
  const properties: Record<string, object> = {};
  for (const [name, { description: _d, secret: _s, ...schema }] of Object.entries(spec)) properties[name] = schema;
  const validate = ajv.compile({ type: 'object', properties, required: [...required], additionalProperties: true });
  const input: Record<string, unknown> = {};
  for (const name of Object.keys(spec)) {
    const raw = env[name];
    if (raw !== undefined && raw !== '') input[name] = raw;
  }
  if (!validate(input)) {
    throw new ConfigError((validate.errors ?? []).map(describe));
  }
  return Object.freeze(input) as ConfigOf<E> & { readonly [K in R]-?: ValueOf<E[K]> };
}
