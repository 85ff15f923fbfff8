// The PGlite thread's entry (see pglite-thread.ts): plain JavaScript, so the thread starts the
// same under `node --import tsx`, jest and a compiled build; the TypeScript loads through tsx.
require('tsx/cjs/api').register();
require('./pglite-thread.worker.ts');
