export * from './keys';
export * from './scopes';
export * from './personal-key-auth';
export * from './passwords';
export * from './session-auth';
export * from './key-powers';
