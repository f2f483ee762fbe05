// The WebAssembly figures of issue 12's table, printed (never asserted: times depend on the
// machine and its load): an estimate with its report (the JSON string the page receives, and
// estimateColumns, what the page's worker calls), resolve, the plan search in plans per second,
// and the cold start (compile and instantiate the .wasm, then the first estimate).
// `node tests/wasm/bench.mjs` (STEPCAST_WASM as for the tests); run by tests/run.sh.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';

import { WASM_BINARY, exampleText, instantiateWasm } from './common.mjs';

/** Median of `rounds` timings (ms) of `fn` repeated `reps` times, per call, in µs. */
function median(fn, reps, rounds = 7) {
  const times = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    for (let i = 0; i < reps; i++) fn();
    times.push(((performance.now() - t0) * 1000) / reps);
  }
  return times.sort((a, b) => a - b)[Math.floor(rounds / 2)];
}

const fmt = (us) => (us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(1)} µs`);

const LLAMA = exampleText('llama3-70b_dgx-h100x8'); // Llama 3 70B on 64 H100
const GPT3 = exampleText('gpt3-175b');

// Cold start, three fresh instances (the first also pays Node's own warm-up).
const cold = [];
for (let i = 0; i < 3; i++) {
  const t0 = performance.now();
  const m = await instantiateWasm();
  const t1 = performance.now();
  m.estimate(LLAMA);
  cold.push([t1 - t0, performance.now() - t0]);
}
const m = await instantiateWasm();
const wasm = readFileSync(WASM_BINARY);
console.log(`stepcast.wasm: ${wasm.length} bytes (${gzipSync(wasm, { level: 9 }).length} gzipped)`);
console.log(`cold start (instantiate, then + first estimate): ${cold.map(([a, b]) => `${a.toFixed(0)} / ${b.toFixed(0)} ms`).join(', ')}`);

// Issue 12's row: the estimate with the JSON a sweep reads ({"report": "summary", "timeline":
// false}: `stepcast estimate --report summary`) and with the full report (census, no timeline);
// then what the page asks for, the report with the schedule's every event.
const SUMMARY = '{"report": "summary", "timeline": false}';
const FULL = '{"report": "full", "timeline": false}';
for (const [name, text] of [['Llama 3 70B, 64 H100', LLAMA], ['GPT-3 175B, 1,024 A100', GPT3]]) {
  const summary = m.estimate(text, SUMMARY), full = m.estimate(text, FULL);
  console.log(`${name}: estimate + summary report (${summary.length} bytes) ` +
    `${fmt(median(() => m.estimate(text, SUMMARY), 500))}, + full report (${full.length} bytes) ` +
    `${fmt(median(() => m.estimate(text, FULL), 200))}`);
  const report = m.estimate(text);
  console.log(`${name}: with the timeline (JSON string, ${report.length} bytes) ${fmt(median(() => m.estimate(text), 20))}, ` +
    `estimateColumns ${fmt(median(() => m.estimateColumns(text), 20))}, resolve ${fmt(median(() => m.resolve(text), 50))}`);
}

// The largest space the page meets (the native benchmark's BM_SearchPlansMoe): Qwen3-235B-A22B
// on 1,024 H100s, EP, expert TP and the dispatcher varied too.
const QWEN235 = JSON.stringify({ model: 'qwen3-235b-a22b', seq_len: 4096, cluster: { node: 'dgx-h100', nodes: 128 },
  plan: { tp: 4, pp: 2, ep: 32, micro_batch: 1, global_batch: 2048 } });
for (const [name, text] of [['Llama 3 70B', LLAMA], ['GPT-3 175B', GPT3], ['Qwen3-235B-A22B', QWEN235]]) {
  const found = JSON.parse(m.search(text, 10));
  const us = median(() => m.search(text, 10), 1, 5);
  console.log(`search ${name}: ${found.evaluated} plans in ${fmt(us)}, ` +
    `${Math.round(found.evaluated / (us / 1e6)).toLocaleString('en-US')} plans/s`);
}
