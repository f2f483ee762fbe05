// The engine as an ES module, for Node and browsers (the npm package's `stepcast-web/engine`):
//
//   import { estimate, search } from 'stepcast-web/engine';
//   const report = await estimate({ model: 'llama3-8b', cluster: { node: 'dgx-h100', nodes: 1 }, plan: { tp: 2 } });
//
// The same WebAssembly module the page runs (wasm/bindings.cpp), on the calling thread: no worker
// (a browser page that estimates while the reader types wants <stepcast-calculator>, whose worker
// keeps the page responsive). The .wasm is found beside this file by `new URL(..., import.meta.url)`
// (vite.config.js, virtual:stepcast-esm): Node reads it from the package, a browser fetches it, and
// a bundler copies it. Each function answers what the CLI's JSON answers (docs/cli.md):
// estimate() `stepcast estimate --format json`, search() `stepcast search --format json`,
// resolve() `stepcast resolve --format json`. An engine error rejects the promise with a
// StepcastError: the engine's message, and its error object(s) (code, path, hint, ...).
import { createStepcast, createStepcastTools, toolsWasmUrl, wasmUrl } from 'virtual:stepcast-esm';

/** An engine error: `message` is the engine's; `errors` every problem it listed ({code, path, message, hint?, ...}). */
export class StepcastError extends Error {
  constructor(errors) {
    super(errors.map((e) => e.message).join('; '));
    this.name = 'StepcastError';
    this.errors = errors;
    this.code = errors[0]?.code;
    this.path = errors[0]?.path;
  }
}

/** The bytes of a .wasm: from the file system (Node, file: URLs), else fetched. */
async function instantiate(url, imports) {
  const where = new URL(url);
  if (where.protocol === 'file:') {
    // A specifier in a variable: a bundler leaves Node's module alone (browsers never get here).
    const fs = 'node:fs/promises';
    const { readFile } = await import(/* @vite-ignore */ fs);
    return WebAssembly.instantiate(await readFile(where), imports);
  }
  const response = await fetch(where);
  if (!response.ok) throw new Error(`${where.href}: HTTP ${response.status}`);
  // Compiles while it downloads; a server that sends another Content-Type gets the other path.
  if (/^application\/wasm\b/.test(response.headers.get('Content-Type') ?? '')) return WebAssembly.instantiateStreaming(response, imports);
  return WebAssembly.instantiate(await response.arrayBuffer(), imports);
}

/** One of the two modules, its .wasm instantiated by instantiate() (Emscripten's own loader does not report a failure). */
function start(factory, url) {
  let failed;
  const failure = new Promise((_, reject) => { failed = reject; });
  return Promise.race([failure, factory({
    instantiateWasm: (imports, receive) => {
      instantiate(url, imports).then(({ instance, module }) => receive(instance, module), failed);
      return {};
    },
  })]);
}

// Each module loads once, on first use; a failed load is tried again on the next call.
let engineModule;
let toolsModule;
const once = (promise, forget) => {
  promise.catch(forget);
  return promise;
};

/** The engine's module (wasm/stepcast.d.ts, StepcastModule): every binding, JSON text in and out. */
export function load() {
  engineModule ??= once(start(createStepcast, wasmUrl), () => { engineModule = undefined; });
  return engineModule;
}

/** The tools module (StepcastToolsModule): imports, exports, fits, the traffic matrix, fit fixes. */
export function loadTools() {
  toolsModule ??= once(start(createStepcastTools, toolsWasmUrl), () => { toolsModule = undefined; });
  return toolsModule;
}

/** A scenario as the engine reads it: JSON text as it is, anything else as its JSON. */
const text = (scenario) => (typeof scenario === 'string' ? scenario : JSON.stringify(scenario));

/** The parsed answer of a binding, or the rejection its {"error"} or {"errors"} means. */
function answer(json) {
  const value = JSON.parse(json);
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    if (value.error) throw new StepcastError([value.error]);
    if (Array.isArray(value.errors)) throw new StepcastError(value.errors);
  }
  return value;
}

/**
 * The report of a scenario (an object or its JSON text), as `stepcast estimate --format json`
 * writes it: options {report: 'full' | 'summary', timeline: false | true}. A plan that does not fit
 * carries the changes that would make it fit (fit_fixes, from the tools module), as the CLI's does.
 */
export async function estimate(scenario, { report = 'full', timeline = false } = {}) {
  const s = text(scenario);
  const result = answer((await load()).estimate(s, JSON.stringify({ report, timeline })));
  if (!result.fits) result.fit_fixes = answer((await loadTools()).fitFixes(s)).fit_fixes;
  return result;
}

/** The fastest plans around a scenario, as `stepcast search --top N --format json` (top: 1-1000, default 10). */
export async function search(scenario, { top = 10 } = {}) {
  if (!Number.isInteger(top) || top < 1 || top > 1000)
    throw new StepcastError([{ code: 'out_of_range', path: 'top', message: `top must be a whole number from 1 to 1000, not ${top}` }]);
  return answer((await load()).search(text(scenario), top));
}

/** The scenario with every default and derived value filled in (`stepcast resolve --format json`); rejects with every problem. */
export async function resolve(scenario) {
  return answer((await load()).resolve(text(scenario)));
}

/** {scenario, page} of a Stepcast link (or its fragment, "v=3&..."). */
export async function fromLink(url) {
  return answer((await load()).fromLink(url));
}

/** The Stepcast link of a scenario on the page at `base` ({link, left_out}); page: {tokens, price_per_gpu_hour}. */
export async function toLink(scenario, base, page = {}) {
  const s = typeof scenario === 'string' ? JSON.parse(scenario) : scenario;
  return answer((await load()).toLink(JSON.stringify({ scenario: s, page }), base));
}

/** The engine's version (the CLI's `stepcast --version`). */
export async function version() {
  return (await load()).version();
}
