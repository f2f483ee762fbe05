// The handle on the engine workers, shared by everything on one page (the full page, or every
// <stepcast-calculator> of a documentation page: one worker, one module). The worker is created
// lazily on first use and loads the WebAssembly module once.
//
// A change of a form is one request (run): the worker resolves the scenario (every default and
// derived value, or every problem of it) and estimates it, in one round trip.
//
// Requests on a named channel replace each other: while one runs, only the latest waits, and the
// ones it replaced resolve to null (fast typing never queues stale work). Each calculator has its
// own channels, so one calculator's requests never cancel another's. Requests without a channel
// (fromLink, resolve) all run.
//
// The plan search (search()) runs in a second worker of its own, started on the first search: a
// search takes 10-200 ms, and in the estimating worker it would hold up the estimate of every
// change made meanwhile. Two workers, two modules: the estimate never waits for a search (the
// second one finds the script and the .wasm in the HTTP cache). The Traffic card's matrix runs in
// a third, with the tools module alone, ended when the card leaves the screen (closeTraffic()).
import { scriptUrl, toolsScriptUrl, toolsWasmUrl, wasmBytes, wasmUrl } from 'virtual:stepcast-wasm';

// A call the engine has been running this long when a newer request comes is given up: the
// worker is ended and a fresh one started (the module comes from the HTTP cache, compiled again
// in ~0.1-0.3 s), rather than letting every later request wait behind it. A WebAssembly call
// cannot be interrupted any other way. An ordinary estimate takes 1-20 ms, a search 10-200 ms
// (in its own worker): only a pathological input (a link with many calibration runs: 20 s, issue
// 38) runs this long. The search worker is never restarted: a search holds up no estimate, and a
// fresh module's compile on a loaded two-core machine cost the typing more than it saved (p90 edit
// -> paint 190-300 ms with restarts, DeepSeek-V3 on 256 GPUs).
const GIVE_UP_MS = 400;

/**
 * One worker running the module: start() once, then send() / latest() messages to it. `describe`:
 * whether its ready answer carries the presets and the schema; `onProgress({loaded, total})`
 * hears the .wasm's download; `giveUpMs`: how long a call may run before a newer request ends the
 * worker (Infinity: never); `toolsOnly`: a worker with the tools module alone (no engine module).
 */
function connection({ describe, onProgress = () => {}, giveUpMs = GIVE_UP_MS, toolsOnly = false }) {
  let worker;
  let readyPromise; // the first start's answer (presets, schema)
  let stopBoot = () => {}; // rejects the answer of the boot under way (close())
  let up; // resolves once the current worker answers requests
  let nextId = 1;
  // Calls in flight, in the order sent: the worker answers them in turn, so the first is the one
  // it runs now, since `since` (ms, performance.now()).
  const calls = new Map(); // id -> {message, resolve, reject, channel}
  let since = 0;
  const channels = new Map(); // name -> {busy, pending: {message, resolve, reject} | null}

  function onMessage(event) {
    const t0 = performance.now();
    const msg = event.data; // copied into the page here, on its first read
    const report = msg.result?.report;
    if (report) stats.received = { ms: performance.now() - t0, stages: report.stages.length, blocks: report.timeline?.columns?.length ?? 0 };
    const call = calls.get(msg.id);
    if (!call) return;
    calls.delete(msg.id);
    since = performance.now();
    if (msg.type === 'result') call.resolve(msg);
    else call.reject(new Error(msg.message));
    if (call.channel) {
      channels.get(call.channel).busy = false;
      pump(call.channel);
    }
  }

  function post(id, message) {
    up.then(() => worker.postMessage({ ...message, id }));
  }

  function send(message, channel) {
    const requeue = giveUpIfStuck();
    const answer = new Promise((resolve, reject) => {
      const id = nextId++;
      if (!calls.size) since = performance.now();
      calls.set(id, { message, resolve, reject, channel });
      post(id, message);
    });
    requeue();
    return answer;
  }

  /**
   * A new request while the worker has run one call past GIVE_UP_MS: a fresh worker. The calls
   * on channels (where the latest wins) answer null, as superseded: the page asks again for what
   * it still shows. The others are sent again, in order, the one that ran too long after the new
   * request (returned: call it once the new request is sent).
   */
  function giveUpIfStuck() {
    if (!calls.size || performance.now() - since < giveUpMs) return () => {};
    const [stuck] = calls.keys();
    worker.terminate();
    boot();
    since = performance.now();
    stats.restarts += 1;
    const again = [];
    for (const [id, call] of [...calls]) {
      if (call.channel) {
        calls.delete(id);
        channels.get(call.channel).busy = false;
        call.resolve(null);
      } else if (id === stuck) {
        again.push([id, call]);
      } else {
        post(id, call.message);
      }
    }
    for (const name of channels.keys()) pump(name);
    return () => {
      for (const [id, call] of again) {
        calls.delete(id);
        calls.set(id, call);
        post(id, call.message);
      }
    };
  }

  function pump(name) {
    const ch = channels.get(name);
    if (ch.busy || !ch.pending) return;
    const job = ch.pending;
    ch.pending = null;
    ch.busy = true;
    send(job.message, name).then(job.resolve, job.reject);
  }

  /** Sends `message` on channel `name`; resolves to the answer, or null when superseded. */
  function latest(name, message) {
    return new Promise((resolve, reject) => {
      let ch = channels.get(name);
      if (!ch) channels.set(name, (ch = { busy: false, pending: null }));
      if (ch.pending) ch.pending.resolve(null);
      ch.pending = { message, resolve, reject };
      const requeue = giveUpIfStuck();
      pump(name);
      requeue();
    });
  }

  /** A new worker loading the module; resolves to its ready answer. */
  function boot() {
    const answer = new Promise((resolve, reject) => {
      stopBoot = () => reject(new Error('the worker was ended'));
      worker = new Worker(new URL('./worker.js', import.meta.url));
      const first = (event) => {
        const msg = event.data;
        if (msg.type === 'progress') {
          onProgress({ loaded: msg.loaded, total: msg.total });
          return;
        }
        worker.removeEventListener('message', first);
        if (msg.type === 'ready') {
          worker.addEventListener('message', onMessage);
          resolve({ version: msg.version, presets: msg.presets, schema: msg.schema, reportSchema: msg.reportSchema });
        } else {
          reject(new Error(msg.message || 'the engine did not start'));
        }
      };
      worker.addEventListener('message', first);
      worker.addEventListener('error', (e) => reject(new Error(e.message || 'the engine worker failed')));
      // A restarted worker need not describe the engine again: the page has its presets.
      worker.postMessage({ type: 'init', scriptUrl, wasmUrl, wasmBytes, toolsScriptUrl, toolsWasmUrl, describe: describe && !readyPromise, toolsOnly });
    });
    up = answer.then(() => {}, () => {});
    return answer;
  }

  /** Starts the worker and the module (once). Resolves to {version, presets, schema}. */
  function start() {
    readyPromise ??= boot();
    return readyPromise;
  }

  /** Drops the request waiting on channel `name` (it resolves to null); one running goes on. */
  function drop(name) {
    const ch = channels.get(name);
    ch?.pending?.resolve(null);
    if (ch) ch.pending = null;
  }

  /**
   * Ends the worker, and with it its modules' memory (a WebAssembly memory never shrinks); the
   * calls in flight resolve to null, as superseded. The next request starts a fresh worker.
   * Returns whether one was started.
   */
  function close() {
    if (!readyPromise) return false;
    stopBoot(); // a start() still waiting for the worker's answer rejects, not waits for ever
    worker.terminate();
    readyPromise = undefined;
    for (const call of calls.values()) call.resolve(null);
    calls.clear();
    for (const ch of channels.values()) {
      ch.pending?.resolve(null);
      ch.pending = null;
      ch.busy = false;
    }
    return true;
  }

  /** Whether a worker is started (or starting). */
  const started = () => !!readyPromise;

  return { start, send, latest, drop, close, started };
}

/**
 * What the bridge did, for window.__stepcast: `restarts`, workers ended because a call ran past
 * GIVE_UP_MS; `received`, the last report: {ms: copying it into the page, stages, blocks};
 * memory(), the modules' memory (below).
 */
export const stats = { restarts: 0, received: null, memory };

const progressListeners = new Set();
let progress = { loaded: 0, total: wasmBytes };
const main = connection({
  describe: true,
  onProgress: (p) => {
    progress = p;
    for (const listener of progressListeners) listener(p);
  },
});
let searcher = null;
let trafficker = null; // the Traffic card's worker (traffic())

/** The second worker (started on first use): the plan search, the scaling sweep, the changes that make a plan fit, how many GPUs for a deadline. */
async function second() {
  searcher ??= connection({ describe: false, giveUpMs: Infinity });
  await searcher.start();
  return searcher;
}

/**
 * Starts the worker and the module (once). Resolves to {version, presets, schema, reportSchema}
 * (schema: the engine's description of every scenario key and of the plan search, schema();
 * reportSchema: every key a report holds, table by table, reportSchema()).
 */
export function ready() {
  return main.start();
}

/**
 * Calls `listener({loaded, total})` now and as the engine's .wasm downloads (bytes; total is
 * known before the first byte comes). Returns the function that stops it.
 */
export function onLoading(listener) {
  progressListeners.add(listener);
  listener(progress);
  return () => progressListeners.delete(listener);
}

/**
 * Resolves and estimates one scenario (a JSON string), in one round trip. Resolves to {resolved,
 * errors, report, engineMs, workerMs}: `resolved` is resolve()'s answer ({scenario, model, groups,
 * gpus, micro_batches}) and `report` the estimate (of many stages, those the cards draw: trim.js),
 * or both null and `errors` every problem of the scenario ({code, path, message, related?, hint?}). Null when a newer request on the same
 * channel superseded this one before it ran. `timeline`: false leaves the schedule's events out
 * (the report's timeline is then {omitted: true}).
 */
export async function run(scenario, channel = 'estimate', { timeline = true } = {}) {
  await main.start();
  const msg = await main.latest(channel, { type: 'run', scenario, timeline });
  return msg && { ...msg.result, engineMs: msg.engineMs, workerMs: msg.workerMs };
}

/**
 * The report of a scenario (a JSON string) with every stage: run()'s report holds the stages the
 * cards draw (engine/trim.js); a download of every stage asks for this one when it is clicked.
 * Without the timeline's events (the downloads read the stages: a plan of thousands of stages
 * would lay out its every block for nothing).
 */
export async function fullReport(scenario) {
  await main.start();
  return (await main.send({ type: 'run', scenario, full: true, timeline: false })).result.report;
}

/** resolve() alone, for a scenario the page is about to show (a JSON string): {scenario, ...} or {errors}. */
export async function resolve(scenario) {
  await main.start();
  return (await main.send({ type: 'resolve', scenario })).result;
}

/**
 * The engine's link for a scenario (as a JSON value) and the page settings ({tokens,
 * price_per_gpu_hour}): resolves to {link} or {error}; null when superseded on `channel`.
 */
export async function toLink(scenario, page, base, channel) {
  await main.start();
  const message = { type: 'toLink', document: JSON.stringify({ scenario, page }), base };
  const msg = channel ? await main.latest(channel, message) : await main.send(message);
  return msg && msg.result;
}

/** The engine's reading of a link (a URL or its fragment): {scenario, page} or {error}. */
export async function fromLink(url) {
  await main.start();
  return (await main.send({ type: 'fromLink', url })).result;
}

/**
 * The plan search around a scenario (a JSON string), in the search worker: resolves to
 * {result, engineMs} (result: the engine's {best, evaluated, rejected, out_of_memory,
 * baseline_s} or {error}), or null when a newer search on `channel` superseded it before it ran.
 */
export async function search(scenario, top = 10, channel = 'search') {
  const msg = await (await second()).latest(channel, { type: 'search', scenario, top });
  return msg && { result: msg.result, engineMs: msg.engineMs };
}

/**
 * The traffic matrix of a scenario (a JSON string), in a worker of its own that runs the tools
 * module alone (started on first use, ended by closeTraffic()): resolves to the engine's traffic()
 * answer ({level, gpus, nodes, total_bytes, bytes_by_kind, bytes_by_tier, groups, cells,
 * bandwidth} or {error}), or null when a newer request on `channel` superseded it before it ran,
 * dropTraffic() dropped it or closeTraffic() ended the worker. DeepSeek-V3 on 256 GPUs takes the
 * engine 150 ms: in the estimate's worker, the next edit's estimate waited for it (213 ms instead
 * of 13, issue 39); in the search worker, it grew that worker's tools module for good.
 */
export async function traffic(scenario, options = {}, channel = 'traffic') {
  const c = (trafficker ??= connection({ describe: false, giveUpMs: Infinity, toolsOnly: true }));
  try {
    await c.start();
  } catch (err) {
    if (c.started()) throw err;
    return null; // closeTraffic() ended it while it started
  }
  const msg = await c.latest(channel, { type: 'traffic', scenario, options });
  return msg && msg.result;
}

/** Drops the traffic request waiting on `channel` (an edit made it stale). */
export function dropTraffic(channel = 'traffic') {
  trafficker?.drop(channel);
}

/**
 * Ends the traffic matrix's worker (its card left the screen): a matrix of 1,024 GPUs grew its
 * module's memory to 248 MiB (issue 39), which a WebAssembly memory never gives back but with its
 * worker. The next traffic() starts a fresh one (the module from the HTTP cache). Returns whether
 * there was one to end.
 */
export function closeTraffic() {
  return trafficker?.close() ?? false;
}

/**
 * The bytes of WebAssembly memory each started worker's modules hold: {estimate, search, traffic},
 * each {engine, tools} (0: not loaded) or null for a worker not started, and `total`.
 */
export async function memory() {
  const ask = async (c) => (c?.started() ? (await c.send({ type: 'memory' }))?.result ?? null : null);
  const [estimate, search, traffic_] = await Promise.all([ask(main), ask(searcher), ask(trafficker)]);
  const total = [estimate, search, traffic_].reduce((a, m) => a + (m ? m.engine + m.tools : 0), 0);
  return { estimate, search, traffic: traffic_, total };
}

/**
 * The plan at other node counts and TP degrees (the engine's scaling sweep, `stepcast scaling`), in
 * the search worker: resolves to its {base, nodes, tp} or {error}, or null when a newer request on
 * `channel` superseded it.
 */
export async function scaling(scenario, channel = 'scaling') {
  const msg = await (await second()).latest(channel, { type: 'scaling', scenario });
  return msg && msg.result;
}

/**
 * The changes, one at a time, that make an out-of-memory plan fit, fastest first, each estimated
 * again (the engine's fit_fixes, `stepcast estimate`), in the search worker (a plan's dozen
 * estimates never hold up the next edit's): {fits, fit_fixes: [{change, settings,
 * iteration_time_s, time_change, memory_bytes}]} or {error}, or null when superseded.
 */
export async function fitFixes(scenario, channel = 'fitFixes') {
  const msg = await (await second()).latest(channel, { type: 'fitFixes', scenario });
  return msg && msg.result;
}

/**
 * How many GPUs for a deadline (`stepcast deadline`): the scenario on other node counts, each with
 * the search's fastest plan, its days and GPU-hours, and the cheapest that trains `tokens` within
 * `days`; in the search worker. {tokens, days, fewest_nodes_at_peak, cheapest, points} or {error},
 * or null when superseded.
 */
export async function deadline(scenario, tokens, days, channel = 'deadline') {
  const msg = await (await second()).latest(channel, { type: 'deadline', scenario, options: JSON.stringify({ tokens, days }) });
  return msg && msg.result;
}

/**
 * A Hugging Face config.json (text) as the scenario's custom model (`stepcast import hf-config`):
 * resolves to the model object or {error}.
 */
export async function importHfConfig(text) {
  await main.start();
  return (await main.send({ type: 'importHfConfig', text })).result;
}

/** A Megatron-LM command line (`stepcast import megatron-args`): {scenario, ignored, notes} or {error}. */
export async function importMegatronArgs(text) {
  await main.start();
  return (await main.send({ type: 'importMegatronArgs', text })).result;
}

/**
 * A torchtitan job config (TOML, `stepcast import torchtitan`): {scenario, ignored, notes} or
 * {error}; `options`: {node?, nodes?}, the node preset and count it runs on.
 */
export async function importTorchtitan(text, options = {}) {
  await main.start();
  return (await main.send({ type: 'importTorchtitan', text, options })).result;
}

/** The plan of a scenario (JSON text) as `stepcast export KIND` writes it: {text} or {error}. */
export async function exportPlan(scenario, kind) {
  await main.start();
  return (await main.send({ type: 'exportPlan', scenario, kind })).result;
}

/**
 * A link fitted to pasted nccl-tests output (`stepcast calibrate --nccl-tests`): {link, checks}
 * or {error}. `files`: [{name, text}]; `gpu`: the cluster's GPU (output of another is refused).
 */
export async function ncclLink(files, nicsPerNode, gpu) {
  await main.start();
  const request = { files, ...(nicsPerNode > 0 ? { nics_per_node: nicsPerNode } : {}), ...(gpu ? { gpu } : {}) };
  return (await main.send({ type: 'ncclLink', request: JSON.stringify(request) })).result;
}

/** A GEMM table (text) fitted on the GPU of `scenario`'s cluster: {gemm, gpu, rows, max_time_error, preset} or {error}. */
export async function gemmFit(text, scenario) {
  await main.start();
  return (await main.send({ type: 'gemmFit', request: JSON.stringify({ text, scenario }) })).result;
}

/**
 * A scenario (JSON text) with its measured runs replaced by the scales they fit: {scenario} or
 * {error}; null when superseded on `channel`. The fit runs the engine as long as the estimate of
 * the same runs (seconds for many deep pipelines): on a channel, a newer link's request replaces
 * it, and a worker given up for being stuck on it does not run it again.
 */
export async function compactCalibration(scenario, channel) {
  await main.start();
  const message = { type: 'compactCalibration', scenario };
  const msg = channel ? await main.latest(channel, message) : await main.send(message);
  return msg && msg.result;
}
