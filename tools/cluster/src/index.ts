/** @sightline/cluster: the local cluster behind `npm run start:cluster`, for the fault test to drive. */
export { startCluster, type ClusterOptions, type LocalCluster } from './cluster';
export { APP_ROLES, readClusterFile, type AppRole, type ClusterFile, type ClusterKeys, type ClusterProcessInfo } from './cluster-file';
export { renderLocalNginxConfig, writeLocalNginxConfig, DEPLOY_NGINX_CONF, type LocalNginxSettings } from './nginx-config';
