// Runs PostHog's HogQL parser (WebAssembly) off the main thread: its time grows steeply with
// nesting, so the caller bounds each parse with a deadline and replaces this worker when one
// is missed. Messages: { id, text, kind: 'expr' | 'select' } in; { id, json } or { id, error } out.
// An expression is parsed without positions; a whole query keeps them (errors name where).
const { parentPort } = require('node:worker_threads');
const load = require('@posthog/hogql-parser');

let ready = load();
// The deadline of a parse starts once the module is compiled, not while it loads.
ready.then(() => parentPort.postMessage({ ready: true }));
parentPort.on('message', async ({ id, text, kind }) => {
  try {
    const parser = await ready;
    const json = kind === 'select' ? parser.parseSelect(text, false) : parser.parseExpr(text, true);
    parentPort.postMessage({ id, json });
  } catch (error) {
    // A thrown parse means the WebAssembly hit a fault (a stack overflow): that instance's
    // memory cannot be trusted afterwards, so the next parse gets a fresh instance.
    ready = load();
    parentPort.postMessage({ id, error: String((error && error.message) || error) });
  }
});
