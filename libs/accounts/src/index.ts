export * from './projects.repository';
export * from './personal-keys.repository';
export * from './bootstrap';
export * from './project-token-cache';
export * from './principal-cache';
export * from './sign-in.repository';
export * from './password-setup';
export * from './users.repository';
