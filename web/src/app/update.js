// The update cycle: every change re-estimates at once (no button). A change renders the form,
// sends the scenario to the engine worker (resolve and estimate in one round trip) and renders
// the answer: the report into every card, or the engine's problems at their controls. The time
// from the input event to the rendered result is the performance measure "stepcast:update".
// After the estimate, the cards with requests of their own ask for theirs: the link (the
// address), then after a pause in the changes traffic and scaling, and after a longer one the plan
// search.
import { $, h } from '../ui/dom.js';
import * as compare from '../cards/compare.js';
import { renderReport } from '../cards/index.js';
import { render as renderScaling } from '../cards/scaling.js';
import { request as requestSearch } from '../cards/search.js';
import { memoryParts } from '../cards/parts.js';
import { fullestStage } from '../cards/stages.js';
import { timelineWanted } from '../cards/timeline.js';
import { renderSoftware, renderSummaryBar, summaryText } from '../cards/summary.js';
import * as engine from '../engine/bridge.js';
import * as form from '../form/index.js';
import { syncLink } from './address.js';
import { renderCalibrated } from './calibration_badge.js';
import { stats } from './stats.js';
import { announce, focusButton, more, setStatus } from './status.js';

let presets = null;
let lastSent = null; // the scenario text last sent to the engine (null: send the next one)
let anyReport = false; // whether a report was ever on show (the results below are the last valid plan's)

/** Takes the presets (the census names their links). */
export function initUpdate(thePresets) {
  presets = thePresets;
}

/** Shows scenario `s` (an example, a file, an import) in the form and estimates it. */
export async function load(s) {
  await form.open(s);
  reload();
}

/** Estimates the scenario in the form, even when it is the one last sent. */
export function reload() {
  lastSent = null;
  update();
}

function done(t0, engineMs, rendered) {
  stats.rendered = rendered;
  stats.updates += 1;
  stats.lastUpdateMs = performance.now() - t0;
  stats.lastEngineMs = engineMs;
  performance.measure('stepcast:update', { start: t0, end: performance.now() });
  document.body.dataset.updates = String(stats.updates);
}

/** A change of the state (at `t0`, the input event's time): render the form, estimate, render. */
export async function update(t0 = performance.now()) {
  const tForm = performance.now();
  form.render();
  stats.lastFormMs = performance.now() - tForm;
  const { scenario, problems } = form.current();
  const text = JSON.stringify(scenario);
  engine.dropTraffic(); // the matrix of the plan before this change: not computed
  // Already estimated (or on its way), e.g. the change event after the input events: leave the
  // page as it is (errors shown stay shown).
  if (!problems.length && text === lastSent) return;
  $('#scenario-json').textContent = JSON.stringify(scenario, null, 2);
  stats.latest = problems.length ? null : text;
  if (problems.length) {
    lastSent = null;
    notEstimated(problems);
    done(t0, NaN, null);
    requestSearch(null);
    return;
  }
  lastSent = text;
  stats.lastPrepMs = performance.now() - t0;
  const sent = JSON.parse(text); // what was sent, apart from the state (which the next change edits)
  let answer;
  try {
    // The schedule's events only when the Timeline card is near the screen (it asks for them
    // when it comes on screen: timeline.js).
    const pending = engine.run(text, 'estimate', { timeline: timelineWanted() });
    syncLink(sent, text);
    answer = await pending;
  } catch (err) {
    setStatus('error', h('strong', null, 'The engine failed: '), String(err.message));
    return;
  }
  // Superseded by a newer change (its answer comes), or a field stopped being a number meanwhile.
  if (!answer || text !== lastSent) return;
  const tAnswer = performance.now();
  stats.lastWaitMs = tAnswer - t0;
  stats.lastWorkerMs = answer.workerMs;
  stats.resolved = answer.resolved;
  const tAnswerForm = performance.now();
  const placed = form.answer(answer);
  stats.lastFormMs += performance.now() - tAnswerForm;
  const r = answer.report;
  if (r && !(await estimated(r, sent, text, tAnswer))) return; // superseded while its cards were drawn
  if (!r) refused(placed);
  stats.lastRenderMs = performance.now() - tAnswer;
  done(t0, answer.engineMs, text);
  // The plan search of this scenario, after a pause in the changes (its own worker).
  requestSearch(sent, text, r, answer.resolved);
}

/** A field whose text is not a number: nothing is sent, the results stay the last valid plan's. */
function notEstimated(problems) {
  const placed = form.showLocal(problems);
  $('#results').classList.add('stale');
  renderSummaryBar('error', 'Not estimated: fix the highlighted field');
  setStatus('error', h('strong', null, 'Not estimated: '), `${problems[0].message.replace(/\.$/, '')} (see the highlighted field). `,
    focusButton(placed[0].field), ' The results below are for the last valid plan.');
}

/** The engine refused the plan: its first problem in the status line (each is at its control). */
function refused(placed) {
  const first = placed[0];
  const message = first.hint ? `${first.message} (try: ${first.hint.replace(/\.$/, '')})` : first.message;
  renderSummaryBar('error', `Invalid plan: ${first.message}`);
  compare.show(null);
  $('#results').classList.add('stale');
  setStatus('error', h('strong', null, 'Invalid plan: '), h('span', { class: 'engine-message' }, message),
    more(placed.length), ' ', focusButton(first.field),
    h('span', { class: 'hint' }, anyReport ? ' The results below are for the last valid plan.' : ''));
}

/**
 * The report `r` of scenario `sent` (its JSON `text`) into every card, the headline first, in
 * tasks of a few milliseconds from `sliceStart` (cards/index.js). Resolves to false when a newer
 * change superseded it meanwhile.
 */
async function estimated(r, sent, text, sliceStart) {
  anyReport = true;
  $('#results').classList.remove('stale');
  renderSoftware(r.plan.framework, sent.plan?.framework === undefined);
  renderCalibrated(r.calibration);
  form.showCalibrationWarnings(r.warnings);
  renderSummaryBar(r.fits ? 'ok' : 'oom', (r.fits ? '' : 'Out of memory · ') + summaryText(r));
  announce(`${r.fits ? '' : 'Out of memory. '}${summaryText(r).replaceAll(' · ', ', ')}.`);
  if (r.fits) setStatus('ok');
  else {
    setStatus('oom', h('strong', null, 'Out of memory: '), `${whereMemoryRunsOut(r)} `,
      h('span', { id: 'fit-fixes', role: 'status' }, 'Looking for the changes that make it fit…'));
    requestFitFixes(text);
  }
  const drawn = await renderReport(r, {
    groups: form.groupInfo(), layout: form.layout(), given: (path) => form.applies({ needs: path }), links: presets.links,
    full: () => engine.fullReport(text),
    timeline: () => engine.run(text, 'timeline'),
  }, sliceStart, () => text === lastSent, () => { stats.headline = text; });
  if (!drawn) return false;
  compare.show(r, sent, stats.linked === text ? stats.link : null);
  afterPause(() => {
    if (text !== lastSent) return;
    requestScaling(text);
    requestTraffic(text);
  });
  return true;
}

// The scaling sweep and the traffic matrix of a plan wait for a pause in the changes: each runs
// the engine 20-150 ms (DeepSeek-V3 on 256 GPUs) in a worker of its own, and on a two-core machine
// edits typed back to back shared the cores with sweeps and matrices the next edit made stale
// (issue 39). The plan search waits longer (cards/search.js).
const PAUSE_MS = 200;
let pauseTimer = 0;

/** `fn()` once no change has come for PAUSE_MS (a newer call replaces it). */
function afterPause(fn) {
  clearTimeout(pauseTimer);
  pauseTimer = setTimeout(fn, PAUSE_MS);
}

/**
 * "stage 3 needs 93.1 GiB per GPU (activations 40.2 the most), the GPU 80 GiB less the 3 %
 * headroom kept free (77.6)." (or the replica set whose GPUs do not fit).
 */
function whereMemoryRunsOut(r) {
  const worst = fullestStage(r);
  // Replica sets: the stages shown are the slowest set's; another set's GPUs may be the ones
  // that do not fit (the report says which).
  const set = (r.replicas ?? []).findIndex((x) => !x.fits);
  const gib = (b) => (b / 2 ** 30).toFixed(1);
  if (worst.fits && set >= 0)
    return `replica set ${set} needs ${gib(r.replicas[set].memory_bytes)} GiB per GPU, but ${r.replicas[set].gpu} has ` +
      `${gib(r.replicas[set].capacity_bytes)} GiB.`;
  const m = worst.memory_bytes;
  const [part, label] = memoryParts().reduce((a, p) => ((m[p[0]] ?? 0) > (m[a[0]] ?? 0) ? p : a), ['', '']);
  const headroom = m.headroom > 0
    ? ` less the ${Math.round(100 * (r.plan?.memory_headroom ?? m.headroom / m.capacity))} % headroom kept free (${gib(m.capacity - m.headroom)})` : '';
  return `stage ${worst.index} needs ${gib(m.total)} GiB per GPU${part ? ` (${label.toLowerCase()} ${gib(m[part])} the most)` : ''}, ` +
    `the GPU ${(m.capacity / 2 ** 30).toFixed(0)} GiB${headroom}.`;
}

/**
 * The engine's changes that make the plan on show fit (fit_fixes: each estimated again), as
 * buttons in the out-of-memory line, fastest first; one applies its plan keys to the form.
 */
async function requestFitFixes(text) {
  const data = await engine.fitFixes(text);
  const el = $('#fit-fixes');
  if (!data || text !== lastSent || !el) return;
  if (data.error || data.fits) {
    el.textContent = '';
    return;
  }
  if (!data.fit_fixes.length) {
    el.textContent = 'No single change makes it fit (recompute, activation offloading, bf16 moments, ' +
      'the distributed optimizer, TP, PP or CP up): try several, a larger cluster or a smaller batch.';
    return;
  }
  const pct = (x) => `${x >= 0 ? '+' : '−'}${Math.abs(100 * x).toFixed(x > -0.1 && x < 0.1 ? 1 : 0)} %`;
  el.replaceChildren('It fits with ', ...data.fit_fixes.slice(0, 3).flatMap((f, i) => [
    i ? (i === Math.min(3, data.fit_fixes.length) - 1 ? ' or ' : ', ') : '',
    h('button', { type: 'button', class: 'link', 'data-settings': f.settings,
      title: `${f.settings}: ${f.iteration_time_s.toPrecision(4)} s an iteration`,
      onclick: () => form.applySettings(f.settings) }, `${f.change} (${pct(f.time_change)} time)`),
  ]), '.');
}

// The traffic matrix is asked for only while its card is on screen: DeepSeek-V3 on 256 GPUs takes
// the engine 150 ms and 4 MB of JSON (a plan of 4,096 nodes' stages 1.2 s), for a card far below
// the fold (issue 39). Off screen, the latest scenario waits until the card scrolls into view; a
// newer edit drops one not yet started (in a worker of its own: the estimate never waits for it).
// Once the card has been off screen CLOSE_AFTER_MS, its worker is ended: its module's memory (248
// MiB after a matrix of 1,024 GPUs) goes with it, and the matrix is asked for again when the card
// is back. Its code loads with its first matrix: a first visit, which does not scroll that far,
// never downloads it (vite.config.js).
const CLOSE_AFTER_MS = 1000;

/**
 * `ask(text)` (a promise of whether it drew `text`) for the latest scenario text given, at once
 * while the card `selector` is on screen, else once it is; `closed()` once the card has been off
 * screen `closeAfterMs`. A scenario asked for but not drawn (closed() ended its request) is asked
 * for again when the card is back.
 */
function whileOnScreen(selector, ask, closed, closeAfterMs) {
  let wanted = null; // the latest scenario text, until it is drawn
  let visible = false;
  let observer = null;
  let closing = 0;
  let asking = null; // the scenario text of the request in flight
  const go = async () => {
    const text = wanted;
    if (!visible || !text || text === asking) return;
    asking = text;
    const drawn = await ask(text);
    if (asking === text) asking = null;
    if (drawn && wanted === text) wanted = null;
  };
  return (text) => {
    wanted = text;
    if (!observer) {
      observer = new IntersectionObserver((entries) => {
        visible = entries[entries.length - 1].isIntersecting;
        clearTimeout(closing);
        if (visible) go();
        else closing = setTimeout(closed, closeAfterMs);
      });
      observer.observe($(selector));
    }
    go();
  };
}

// At the level it is drawn: a heatmap (at most HEATMAP_PX wide, cards/traffic.js) of more GPUs
// than it has pixels is asked for node by node.
const requestTraffic = whileOnScreen('#traffic-card', async (text) => {
  stats.trafficAsked = (stats.trafficAsked ?? 0) + 1;
  const gpus = stats.resolved?.gpus ?? 0;
  try {
    const { HEATMAP_PX, renderTraffic } = await import('../cards/traffic.js');
    const data = await engine.traffic(text, gpus > HEATMAP_PX * devicePixelRatio ? { level: 'node' } : {});
    if (!data || text !== lastSent) return false;
    renderTraffic(data, stats);
    stats.traffic.scenario = text;
  } catch (err) {
    stats.traffic = { error: String(err.message), scenario: text };
  }
  return true;
}, () => {
  if (engine.closeTraffic()) stats.trafficClosed = (stats.trafficClosed ?? 0) + 1;
}, CLOSE_AFTER_MS);

/**
 * The scaling chart of the plan on show, from the search worker (a newer plan supersedes it),
 * whether or not its card is on screen: drawn only once its card scrolled into view, its chart
 * (~800 px) pushed the cards below it, the timeline out of view, as the user reached them.
 */
async function requestScaling(text) {
  const data = await engine.scaling(text);
  if (data && text === stats.rendered) renderScaling(data);
  stats.scaling = data ? (data.error ? 'none' : data.nodes.length) : stats.scaling;
}
