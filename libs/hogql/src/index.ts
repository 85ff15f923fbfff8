export * from './hogql-compiler';
export * from './select';
