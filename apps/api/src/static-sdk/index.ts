export { createStaticSdkRouter } from './static-sdk.route';
export { openPosthogJsFiles, type SdkFile, type SdkFiles } from './posthog-js-files';
