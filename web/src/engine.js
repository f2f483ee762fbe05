// The page's handle on the engine worker: created lazily on first use, loads the WebAssembly
// module once, and runs one estimate at a time. Requests made while one is running replace each
// other (only the latest scenario matters), so fast typing never queues stale work.
import wasmUrl from 'virtual:stepcast-wasm';

let worker;
let readyPromise;
let nextId = 1;
let running = null; // {id, resolve, reject}
let pending = null; // {scenario, resolve, reject}

function onMessage(event) {
  const msg = event.data;
  if (msg.type !== 'result' && msg.type !== 'failure') return;
  const job = running;
  running = null;
  if (job && job.id === msg.id) {
    if (msg.type === 'result') job.resolve({ result: msg.result, engineMs: msg.engineMs, workerMs: msg.workerMs });
    else job.reject(new Error(msg.message));
  }
  pump();
}

function pump() {
  if (running || !pending) return;
  const job = pending;
  pending = null;
  running = { id: nextId++, resolve: job.resolve, reject: job.reject };
  worker.postMessage({ type: 'estimate', id: running.id, scenario: job.scenario });
}

/** Starts the worker and the module (once). Resolves to {version, presets}. */
export function ready() {
  if (!readyPromise) {
    readyPromise = new Promise((resolve, reject) => {
      worker = new Worker(new URL('./worker.js', import.meta.url));
      const first = (event) => {
        const msg = event.data;
        worker.removeEventListener('message', first);
        if (msg.type === 'ready') {
          worker.addEventListener('message', onMessage);
          resolve({ version: msg.version, presets: msg.presets });
        } else {
          reject(new Error(msg.message || 'the engine did not start'));
        }
      };
      worker.addEventListener('message', first);
      worker.addEventListener('error', (e) => reject(new Error(e.message || 'the engine worker failed')));
      worker.postMessage({ type: 'init', wasmUrl });
    });
  }
  return readyPromise;
}

/**
 * Estimates one scenario (a JSON string). Resolves to {result, engineMs}, where result is the
 * report or {error}; resolves to null when a newer request superseded this one before it ran.
 */
export async function estimate(scenario) {
  await ready();
  return new Promise((resolve, reject) => {
    if (pending) pending.resolve(null);
    pending = { scenario, resolve, reject };
    pump();
  });
}
