export * from './parse-config';
export * from './env-specs';
