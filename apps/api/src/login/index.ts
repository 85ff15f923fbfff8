export { createLoginRouter, SESSION_TTL_MS } from './login.route';
export { createSignInThrottle, SIGN_IN_COOLOFF_SECONDS, type SignInThrottle } from './sign-in-throttle';
