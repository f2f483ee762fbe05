// The estimate never waits for a search (issue 37 item 5), in Chromium: a user types on
// DeepSeek-V3 on 256 GPUs (a search of ~26,600 plans, 1-2 s in WebAssembly) while the tuner runs;
// each edit's numbers are painted without waiting for it (the search runs in its own worker; the
// figures are printed, the bound is a shared machine's), and the search card says how long it has
// searched. And edit -> painted numbers typed back to back on three plans of 256 GPUs, with the
// Traffic card on screen (issue 39): figures printed, with the longest task during the edits and
// the WebAssembly modules' memory once the card has closed (left the screen).
import assert from 'node:assert/strict';
import { loadavg } from 'node:os';
import { test } from 'node:test';

import { CLI, cliEstimate, requireBuilt } from '../wasm/common.mjs';
import { assertNumbers, metrics, openPage, pageScenario, searchShown, suite } from './helpers.mjs';

requireBuilt(CLI, 'build it with cmake -S . -B build && make -C build stepcast');

const fx = suite({ serviceWorkers: 'block' });
// DeepSeek-V3 on 32 DGX H100: TP 4 × PP 16 × EP 8, full recompute, 1 and 4 layers on the first and last stages.
const DEEPSEEK = 'v=2&model=deepseek-v3&node=dgx-h100&nodes=32&tp=4&pp=16&ep=8&etp=1&gbs=1024&rc=full&fsl=1&lsl=4';
const EDITS = 32; // as the issue measured

/**
 * Types `value` into `selector` as one input event and resolves to the ms from it to the start of
 * the first frame after the page rendered that scenario in every card (`ms`) and after it drew its
 * headline numbers (`numbers`: the Estimate card, drawn first; each the frame that paints them),
 * and whether a search was running.
 */
function typeAndTime(p, selector, value) {
  return p.evaluate(([sel, v]) => new Promise((done) => {
    const el = document.querySelector(sel);
    const s = window.__stepcast;
    const searching = s.search.state === 'searching';
    const t0 = performance.now();
    el.value = v;
    el.dispatchEvent(new Event('input', { bubbles: true }));
    const wanted = s.latest;
    let numbers = NaN;
    const check = () => {
      if (Number.isNaN(numbers) && s.headline === wanted) numbers = performance.now() - t0;
      if (s.rendered === wanted && s.latest === wanted) done({ ms: performance.now() - t0, numbers, searching, wait: s.lastWaitMs, worker: s.lastWorkerMs, render: s.lastRenderMs, state: s.search.state });
      else requestAnimationFrame(check);
    };
    requestAnimationFrame(check);
  }), [selector, value]);
}

test('typing on DeepSeek-V3 on 256 GPUs while the tuner runs: the numbers never wait for the search', async () => {
  const p = await openPage(fx, `${fx.site.url}#${DEEPSEEK}`);
  // What the search card says while it searches.
  await p.evaluate(() => {
    window.__said = new Set();
    const busy = document.querySelector('#search-busy');
    new MutationObserver(() => window.__said.add(busy.textContent)).observe(busy, { childList: true, characterData: true, subtree: true });
  });
  const times = [];
  let whileSearching = 0;
  for (let i = 1; i <= EDITS; i++) {
    // A new global batch (DP is 4) each edit, 0.45 s after the last: the search of the previous
    // one starts 0.4 s after it and takes 0.15-2 s, so it runs when the edit comes.
    await p.waitForTimeout(450);
    const { ms, searching, ...parts } = await typeAndTime(p, '#f-global_batch', String(1024 + 4 * i));
    if (process.env.STEPCAST_DEBUG) console.log(ms.toFixed(0), searching, JSON.stringify(parts));
    times.push(ms);
    whileSearching += searching ? 1 : 0;
  }
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
  console.log(`${EDITS} edits (${whileSearching} while a search ran): median ${at(0.5).toFixed(1)} ms, ` +
    `p90 ${at(0.9).toFixed(1)} ms, max ${at(1).toFixed(1)} ms; searcher restarts ${await p.evaluate(() => window.__stepcast.engine.restarts)}`);
  assert.ok(whileSearching >= (2 * EDITS) / 3, `most edits came while a search ran (${whileSearching} of ${EDITS})`);
  const said = await p.evaluate(() => [...window.__said]);
  assert.ok(said.some((t) => /^searching… \d+\.\d s$/.test(t)), `the card says how long it has searched (${said.join(' | ')})`);
  // The bound. On this two-core machine with three C++ builds beside it (load average
  // 9-11), eight runs of 24 edits gave p90 50-99 ms (median 30-40 ms); the search in the
  // estimate's worker gave p90 529 ms (issue 37). Ending the search worker at each edit instead
  // (the next search compiles the module again) measured worse: p90 66-106 ms over four runs.
  assert.ok(at(0.9) <= 100, `p90 edit -> painted numbers ${at(0.9).toFixed(1)} ms (the issue: <= 100 ms)`);
  // The numbers on show are the CLI's for the last edit.
  const cli = cliEstimate(JSON.stringify(await pageScenario(p)), { timeline: false });
  assert.equal(cli.status, 0, cli.stderr);
  assertNumbers(cli.report, await metrics(p), 'the last edit');
  await p.close();
});

// Three plans of 32 DGX H100 (256 GPUs), each edit a new global batch (a multiple of DP).
const ON_256 = [
  ['Llama 3 70B', 'v=2&model=llama3-70b&node=dgx-h100&nodes=32&tp=8&pp=4&gbs=512', 512, 8],
  ['GPT-3 175B', 'v=2&model=gpt3-175b&node=dgx-h100&nodes=32&tp=8&pp=8&gbs=512', 512, 4],
  ['DeepSeek-V3', DEEPSEEK, 1024, 4],
];
const BACK_TO_BACK = 16;

/**
 * Scrolls the Traffic card into view, kept there (a card drawn above it may push it out: off
 * screen its matrix is not asked for, and its worker ends), until it shows the plan on show.
 */
function onScreenDrawn(p) {
  return p.waitForFunction(() => {
    const s = window.__stepcast;
    if (s.traffic?.scenario === s.rendered) return true;
    document.querySelector('#traffic-card').scrollIntoView({ block: 'nearest' });
    return false;
  }, null, { timeout: 30000, polling: 200 });
}
const mib = (bytes) => (bytes / 2 ** 20).toFixed(1);

test('edit -> painted numbers, typed back to back on 256 GPUs with the Traffic card on screen: figures', async () => {
  const p = await openPage(fx, fx.site.url);
  await p.evaluate(() => {
    window.__tasks = [];
    new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__tasks.push(Math.round(e.duration)); }).observe({ type: 'longtask' });
  });
  const lines = [];
  for (const [name, link, gbs, dp] of ON_256) {
    await p.evaluate((f) => { location.hash = f; }, link);
    await p.waitForFunction((f) => window.__stepcast.link?.includes(f.split('&')[1]), link, { timeout: 20000 });
    // Typed back to back, not while the search of the plan opened runs (1-2 s in WebAssembly on
    // DeepSeek-V3; the test above types while it does): a burst of edits starts none.
    await searchShown(p);
    await onScreenDrawn(p);
    await p.evaluate(() => { window.__tasks = []; });
    const times = [];
    const headline = [];
    // Each edit as soon as the previous one is painted in every card.
    for (let i = 1; i <= BACK_TO_BACK; i++) {
      const t = await typeAndTime(p, '#f-global_batch', String(gbs + dp * i));
      times.push(t.ms);
      headline.push(t.numbers);
    }
    const tasks = await p.evaluate(() => window.__tasks);
    const p90 = (xs) => [...xs].sort((a, b) => a - b)[Math.ceil(0.9 * xs.length) - 1];
    const sorted = [...times].sort((a, b) => a - b);
    const at = (q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
    const cli = cliEstimate(JSON.stringify(await pageScenario(p)), { timeline: false });
    assert.equal(cli.status, 0, cli.stderr);
    assertNumbers(cli.report, await metrics(p), `${name}: the last edit`);
    // The modules' memory with the card open, then once it has been off screen long enough that
    // its worker ended (update.js).
    const open = await p.evaluate(() => window.__stepcast.engine.memory());
    const closes = await p.evaluate(() => window.__stepcast.trafficClosed ?? 0);
    await p.evaluate(() => window.scrollTo(0, 0));
    await p.waitForFunction((n) => window.__stepcast.trafficClosed > n, closes, { timeout: 10000 });
    const closed = await p.evaluate(() => window.__stepcast.engine.memory());
    assert.equal(closed.traffic, null, `${name}: the Traffic card's worker ended`);
    lines.push(`${name}: ${BACK_TO_BACK} edits, every card painted median ${at(0.5).toFixed(1)} ms, p90 ${at(0.9).toFixed(1)} ms, ` +
      `max ${at(1).toFixed(1)} ms; headline numbers painted p90 ${p90(headline).toFixed(1)} ms; longest task ${Math.max(0, ...tasks)} ms (long tasks [${tasks}] ms); modules' memory ` +
      `${mib(open.total)} MiB with the Traffic card open, ${mib(closed.total)} MiB after it closed ` +
      `(estimate ${mib(closed.estimate.engine)}, search ${mib(closed.search?.engine ?? 0)} + tools ${mib(closed.search?.tools ?? 0)})`);
  }
  // The issue's goal: p90 <= 40 ms, no long task over 50 ms, the modules' memory under 64 MiB
  // once the card closed; figures, as the times depend on what else runs on this shared two-core
  // machine (its load average printed beside them).
  console.log(`${lines.join('\n')}\nload average ${loadavg().map((x) => x.toFixed(2)).join(', ')}`);
  await p.close();
});
