export * from './types';
export * from './parse';
export * from './compile';
export * from './query-params';
export * from './elements-chain';
