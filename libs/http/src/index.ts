export * from './api-error';
export * from './middleware';
export * from './health';
export * from './server';
export * from './service-app';
export * from './cors';
export * from './input-guard';
export * from './client-ip';
