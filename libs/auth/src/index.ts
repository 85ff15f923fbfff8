export * from './keys';
export * from './scopes';
export * from './personal-key-auth';
