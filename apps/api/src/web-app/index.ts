export { createWebAppRouter, isAppPath, RESERVED_SEGMENTS } from './web-app.route';
export { openWebAppFiles, type WebAppFile, type WebAppFiles } from './web-app-files';
