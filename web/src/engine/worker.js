// The engine in a Web Worker: loads the WebAssembly module once (the URLs of its script and its
// .wasm come with the first message; the .wasm compiles while it downloads, and the page hears
// how many bytes have come), then answers run (resolve and estimate), resolve, link, traffic,
// scaling, import, export, plan-search and memory requests (the
// page runs searches in a second instance of this worker, see bridge.js). The engine module ships
// with the page; the tools module (wasm/tool_bindings.cpp: traffic, import, export, calibration
// fits, the changes that make a plan fit) is loaded on the first request for one of them, off the
// first visit.
//
// A run is one round trip for a change of the form: resolve() (every default and derived value
// filled in, or every problem of the scenario at once), then, when there is none, the estimate
// (estimateColumns: the report with the timeline's events as typed columns, transferred without a
// copy, with each event's replica set and group).
/* global createStepcast, createStepcastTools, importScripts */
import { KINDS } from './kinds.js';
import { trimReport } from './trim.js';

let engine;
let tools; // the tools module's promise, from the first request for one of its bindings
let toolsUrls; // {scriptUrl, wasmUrl} of the tools module, from the init message
let kindIndex; // the module's kind number -> the page's (KINDS; KINDS.length for any other)
// Each module's WebAssembly memory, for memory(): it only grows (a call that needed 200 MiB keeps
// them), so the page ends a worker whose module grew for a card no longer on screen (bridge.js).
const memories = { engine: null, tools: null };

/**
 * The timeline's typed columns from estimateColumns' packed events (6 numbers each) and placement
 * (2): every event, or those of the stages in `keep` (a Set; trim.js).
 */
function columns(packed, placement, keep) {
  const events = [];
  for (let i = 0; i < packed.length / 6; i++) if (!keep || keep.has(packed[6 * i])) events.push(i);
  const n = events.length;
  const t = {
    length: n,
    stage: new Int32Array(n),
    kind: new Uint8Array(n),
    microBatch: new Int32Array(n),
    chunk: new Int32Array(n),
    start: new Float64Array(n),
    end: new Float64Array(n),
    replica: new Int32Array(n),
    group: new Int32Array(n),
  };
  for (let i = 0; i < n; i++) {
    const j = 6 * events[i];
    const k = 2 * events[i];
    t.stage[i] = packed[j];
    t.kind[i] = kindIndex[packed[j + 1]] ?? KINDS.length;
    t.microBatch[i] = packed[j + 2];
    t.chunk[i] = packed[j + 3];
    t.start[i] = packed[j + 4];
    t.end[i] = packed[j + 5];
    t.replica[i] = placement[k];
    t.group[i] = placement[k + 1];
  }
  return t;
}

/**
 * Emscripten's instantiateWasm hook: fetches the .wasm once and compiles it while it downloads
 * (instantiateStreaming on the response itself, so the browser may cache the compiled code),
 * reading a copy of the body to post {type: 'progress', loaded, total} (total: the .wasm's size,
 * known at build time; Content-Length would be the compressed size). A server that sends the wrong
 * Content-Type gets the non-streaming path. `failed` hears any error (Emscripten does not).
 */
function instantiate(wasmUrl, total, failed, progress = true, name = 'engine') {
  return (imports, receive) => {
    (async () => {
      const response = await fetch(wasmUrl, { credentials: 'same-origin' });
      if (!response.ok) throw new Error(`${wasmUrl}: HTTP ${response.status}`);
      const counted = (async () => {
        const reader = response.clone().body.getReader();
        for (let loaded = 0; ;) {
          const { done, value } = await reader.read();
          if (done) return;
          loaded += value.length;
          if (progress) self.postMessage({ type: 'progress', loaded: Math.min(loaded, total), total });
        }
      })();
      const streaming = /^application\/wasm\b/.test(response.headers.get('Content-Type') ?? '');
      const { instance, module } = streaming ? await WebAssembly.instantiateStreaming(response, imports)
        : await WebAssembly.instantiate(await response.arrayBuffer(), imports);
      await counted;
      memories[name] = Object.values(instance.exports).find((x) => x instanceof WebAssembly.Memory) ?? null;
      receive(instance, module);
    })().catch(failed);
    return {}; // the exports come later, through receive
  };
}

/** The tools module, loaded once, on the first request that needs it (no loading bar: the page's
 * own status line says what is being done). */
function toolsModule() {
  tools ??= (async () => {
    importScripts(toolsUrls.scriptUrl);
    let failed;
    const failure = new Promise((_, reject) => { failed = reject; });
    return Promise.race([failure, createStepcastTools({
      locateFile: (path) => (path.endsWith('.wasm') ? toolsUrls.wasmUrl : path),
      instantiateWasm: instantiate(toolsUrls.wasmUrl, 0, failed, false, 'tools'),
    })]);
  })();
  // A failed load is tried again on the next request (a network that came back).
  tools.catch(() => { tools = undefined; });
  return tools;
}

/**
 * resolve() then, when the scenario has no problem, the estimate: {resolved, errors, report,
 * engineMs} (engineMs: the time in the module's two calls). The report as the page draws it
 * (trim.js), or every stage of it when `full`; without the timeline's events when not `timeline`
 * (its report's timeline is then {omitted: true}): the Timeline card asks for them when it comes
 * on screen, and an edit made away from it does not pay for them (issue 39: DeepSeek-V3 on 256
 * GPUs, 16,000 events, 3.6-4.0 ms of the module's 4.6 ms in Node).
 */
function run(scenario, transfer, full, timeline) {
  const t0 = performance.now();
  const resolved = JSON.parse(engine.resolve(scenario));
  if (resolved.errors) return { resolved: null, errors: resolved.errors, report: null, engineMs: performance.now() - t0 };
  const fast = timeline ? engine.estimateColumns(scenario) : engine.estimateColumns(scenario, '{"timeline": false}');
  const engineMs = performance.now() - t0;
  const report = JSON.parse(fast.json);
  if (report.error) return { resolved: null, errors: [report.error], report: null, engineMs };
  const keep = full ? null : trimReport(report);
  if (!timeline) {
    report.timeline = { omitted: true };
  } else if (report.timeline) {
    const cols = columns(fast.events, fast.placement, keep);
    report.timeline = { truncated: !!report.timeline.truncated, columns: cols, kinds: KINDS };
    transfer.push(cols.stage.buffer, cols.kind.buffer, cols.microBatch.buffer, cols.chunk.buffer,
      cols.start.buffer, cols.end.buffer, cols.replica.buffer, cols.group.buffer);
  }
  return { resolved, errors: null, report, engineMs };
}

self.onmessage = async (event) => {
  const msg = event.data;
  try {
    if (msg.type === 'init') {
      toolsUrls = { scriptUrl: msg.toolsScriptUrl, wasmUrl: msg.toolsWasmUrl };
      // A worker for the tools alone (the Traffic card's, bridge.js): no engine module.
      if (msg.toolsOnly) {
        self.postMessage({ type: 'ready', version: (await toolsModule()).version(), presets: null, schema: null, reportSchema: null });
        return;
      }
      importScripts(msg.scriptUrl);
      let failed;
      const failure = new Promise((_, reject) => { failed = reject; });
      engine = await Promise.race([failure, createStepcast({
        locateFile: (path) => (path.endsWith('.wasm') ? msg.wasmUrl : path),
        instantiateWasm: instantiate(msg.wasmUrl, msg.wasmBytes, failed),
      })]);
      kindIndex = [...engine.timelineKinds()].map((name) => (KINDS.includes(name) ? KINDS.indexOf(name) : KINDS.length));
      // The presets and the schemas go to the page once: the search worker does not send them.
      self.postMessage({
        type: 'ready',
        version: engine.version(),
        presets: msg.describe ? JSON.parse(engine.presets()) : null,
        schema: msg.describe ? JSON.parse(engine.schema()) : null,
        reportSchema: msg.describe ? JSON.parse(engine.reportSchema()) : null,
      });
      return;
    }
    const t0 = performance.now();
    const transfer = [];
    let result;
    if (msg.type === 'run') result = run(msg.scenario, transfer, msg.full, msg.timeline !== false);
    else if (msg.type === 'resolve') result = JSON.parse(engine.resolve(msg.scenario));
    else if (msg.type === 'toLink') result = JSON.parse(engine.toLink(msg.document, msg.base));
    else if (msg.type === 'fromLink') result = JSON.parse(engine.fromLink(msg.url));
    else if (msg.type === 'search') result = JSON.parse(engine.search(msg.scenario, msg.top ?? 10));
    else if (msg.type === 'scaling') result = JSON.parse(engine.scaling(msg.scenario));
    else if (msg.type === 'traffic') result = JSON.parse((await toolsModule()).traffic(msg.scenario, JSON.stringify(msg.options ?? {})));
    else if (msg.type === 'importHfConfig') result = JSON.parse((await toolsModule()).importHfConfig(msg.text));
    else if (msg.type === 'importMegatronArgs') result = JSON.parse((await toolsModule()).importMegatronArgs(msg.text));
    else if (msg.type === 'importTorchtitan') result = JSON.parse((await toolsModule()).importTorchtitan(msg.text, JSON.stringify(msg.options ?? {})));
    else if (msg.type === 'exportPlan') result = JSON.parse((await toolsModule()).exportPlan(msg.scenario, msg.kind));
    else if (msg.type === 'ncclLink') result = JSON.parse((await toolsModule()).ncclLink(msg.request));
    else if (msg.type === 'gemmFit') result = JSON.parse((await toolsModule()).gemmFit(msg.request));
    else if (msg.type === 'deadline') result = JSON.parse((await toolsModule()).deadline(msg.scenario, msg.options));
    else if (msg.type === 'fitFixes') result = JSON.parse((await toolsModule()).fitFixes(msg.scenario));
    else if (msg.type === 'memory')
      result = { engine: memories.engine?.buffer.byteLength ?? 0, tools: memories.tools?.buffer.byteLength ?? 0 };
    else if (msg.type === 'compactCalibration') result = JSON.parse((await toolsModule()).compactCalibration(msg.scenario));
    else throw new Error(`unknown request ${msg.type}`);
    const workerMs = performance.now() - t0;
    self.postMessage({ type: 'result', id: msg.id, engineMs: result.engineMs ?? workerMs, workerMs, result }, transfer);
  } catch (err) {
    self.postMessage({ type: 'failure', id: msg.id, message: String(err && err.message || err) });
  }
};
