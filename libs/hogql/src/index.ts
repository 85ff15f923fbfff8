export * from './hogql-compiler';
