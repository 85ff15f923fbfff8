export * from './types';
export * from './parse';
export * from './compile';
export * from './elements-chain';
