export { createRemoteConfigRouter, REMOTE_CONFIG_MAX_AGE_SECONDS, type RemoteConfigDeps } from './remote-config.route';
export { buildRemoteConfig, remoteConfigScript, ANALYTICS_ENDPOINT } from './remote-config';
