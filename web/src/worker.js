// The engine in a Web Worker: loads the WebAssembly module once (its URL comes with the first
// message), then answers estimate, link and plan-search requests (the page runs searches in a
// second instance of this worker, see engine.js) (the engine's link codec: the page and the
// CLI read and write links with the same code). Reports are parsed here; the timeline's events are
// turned into typed columns (with each event's replica set and group, from estimateColumns'
// placement) and transferred, so the page gets them without a copy.
/* global createStepcast, importScripts */

const KINDS = ['forward', 'backward', 'send', 'dp_sync', 'optimizer'];
let engine;

function emptyColumns(n) {
  return {
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
}

function columns(events) {
  const n = events.length;
  const t = emptyColumns(n);
  for (let i = 0; i < n; i++) {
    const e = events[i];
    t.replica[i] = e.replica ?? 0;
    t.group[i] = e.group ?? 0;
    t.stage[i] = e.stage;
    const k = KINDS.indexOf(e.kind);
    t.kind[i] = k < 0 ? KINDS.length : k;
    t.microBatch[i] = e.micro_batch ?? 0;
    t.chunk[i] = e.chunk ?? 0;
    t.start[i] = e.start_s;
    t.end[i] = e.end_s;
  }
  return t;
}

/**
 * The same columns from estimateColumns' packed events (6 numbers per event) and placement (2 per
 * event: replica set, group; absent from modules before heterogeneous clusters).
 */
function packedColumns(packed, kinds, placement) {
  const n = packed.length / 6;
  const t = emptyColumns(n);
  if (placement && placement.length === 2 * n) {
    for (let i = 0, j = 0; i < n; i++, j += 2) {
      t.replica[i] = placement[j];
      t.group[i] = placement[j + 1];
    }
  }
  const map = kinds.map((k) => (KINDS.indexOf(k) < 0 ? KINDS.length : KINDS.indexOf(k)));
  for (let i = 0, j = 0; i < n; i++, j += 6) {
    t.stage[i] = packed[j];
    t.kind[i] = map[packed[j + 1]];
    t.microBatch[i] = packed[j + 2];
    t.chunk[i] = packed[j + 3];
    t.start[i] = packed[j + 4];
    t.end[i] = packed[j + 5];
  }
  return t;
}

self.onmessage = async (event) => {
  const msg = event.data;
  try {
    if (msg.type === 'init') {
      importScripts(msg.wasmUrl);
      engine = await createStepcast();
      self.postMessage({
        type: 'ready',
        version: engine.version(),
        presets: JSON.parse(engine.presets()),
      });
      return;
    }
    if (msg.type === 'toLink' || msg.type === 'fromLink') {
      let text;
      if (!engine.toLink) text = '{"error":{"code":"unsupported","path":"","message":"this engine build has no links"}}';
      else if (msg.type === 'toLink') text = engine.toLink(msg.document, msg.base);
      else text = engine.fromLink(msg.url);
      self.postMessage({ type: 'result', id: msg.id, result: JSON.parse(text) });
      return;
    }
    if (msg.type === 'search') {
      const t0 = performance.now();
      const text = engine.search
        ? engine.search(msg.scenario, msg.top ?? 10)
        : '{"error":{"code":"unsupported","path":"","message":"this engine build has no plan search"}}';
      const engineMs = performance.now() - t0;
      self.postMessage({ type: 'result', id: msg.id, engineMs, result: JSON.parse(text) });
      return;
    }
    if (msg.type === 'estimate') {
      const t0 = performance.now();
      // estimateColumns: the same report with the timeline as a Float64Array (much faster than
      // JSON events); estimate: older modules.
      const fast = engine.estimateColumns ? engine.estimateColumns(msg.scenario) : null;
      const text = fast ? fast.json : engine.estimate(msg.scenario);
      const engineMs = performance.now() - t0;
      const t1 = performance.now();
      const result = JSON.parse(text);
      const transfer = [];
      if (fast && result.timeline) {
        const cols = packedColumns(fast.events, fast.kinds, fast.placement);
        result.timeline = { truncated: !!result.timeline.truncated, columns: cols, kinds: KINDS };
        transfer.push(cols.stage.buffer, cols.kind.buffer, cols.microBatch.buffer,
          cols.chunk.buffer, cols.start.buffer, cols.end.buffer, cols.replica.buffer, cols.group.buffer);
      } else if (result.timeline && Array.isArray(result.timeline.events)) {
        const cols = columns(result.timeline.events);
        result.timeline = { truncated: !!result.timeline.truncated, columns: cols, kinds: KINDS };
        transfer.push(cols.stage.buffer, cols.kind.buffer, cols.microBatch.buffer,
          cols.chunk.buffer, cols.start.buffer, cols.end.buffer, cols.replica.buffer, cols.group.buffer);
      }
      const workerMs = performance.now() - t0;
      self.postMessage({ type: 'result', id: msg.id, engineMs, workerMs, parseMs: performance.now() - t1, result }, transfer);
    }
  } catch (err) {
    self.postMessage({ type: 'failure', id: msg.id, message: String(err && err.message || err) });
  }
};
