// Runs PostHog's HogQL parser (WebAssembly) off the main thread: its time grows steeply with
// nesting, so the caller bounds each parse with a deadline and replaces this worker when one
// is missed. Messages: { id, text } in; { id, json } or { id, error } out.
const { parentPort } = require('node:worker_threads');
const load = require('@posthog/hogql-parser');

let ready = load();
// The deadline of a parse starts once the module is compiled, not while it loads.
ready.then(() => parentPort.postMessage({ ready: true }));
parentPort.on('message', async ({ id, text }) => {
  try {
    const parser = await ready;
    parentPort.postMessage({ id, json: parser.parseExpr(text, true) });
  } catch (error) {
    // A thrown parse means the WebAssembly hit a fault (a stack overflow): that instance's
    // memory cannot be trusted afterwards, so the next parse gets a fresh instance.
    ready = load();
    parentPort.postMessage({ id, error: String((error && error.message) || error) });
  }
});
