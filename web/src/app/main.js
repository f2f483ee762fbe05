// Stepcast's page: wires the inputs to the engine worker and the results. Every change
// re-estimates at once (no button); the time from the input event to the rendered result is
// recorded as the performance measure "stepcast:update".
//
// The scenario lives in the URL fragment (the engine's link format, see link.js): the page opens
// the link it is loaded with, and keeps the address up to date (at most every 0.4 s while typing).
// Each change the user makes after a pause, an applied plan and a chosen example is a history
// entry, so the back button returns to the previous plan; the writes of one burst of typing
// replace each other. With ?embed=1 the page is the
// compact calculator for iframes (no header, key controls and results only).
import './style.css';

import { $, $$, h } from '../ui/dom.js';
import * as compare from '../cards/compare.js';
import { save } from '../ui/download.js';
import * as engine from '../engine/bridge.js';
import * as form from '../form/index.js';
import { getIn } from '../form/state.js';
import { init as initImportExport } from '../cards/import_export.js';
import { clusterGroups } from '../scenario/groups.js';
import { billions, linkMessage, linkProblem, pageSettings } from '../scenario/link.js';
import { drawTimeline, renderCost, renderReport, renderSoftware, renderSummaryBar, summaryText } from '../cards/results.js';
import { initSearch, request as requestSearch, searchStats } from '../cards/search.js';
import { render as renderScaling } from '../cards/scaling.js';
import { resetColors } from '../cards/timeline_chart.js';
import { renderTraffic } from '../cards/traffic.js';
import { conditional } from '../scenario/schema.js';
import { roveTips, tip } from '../ui/tooltip.js';
import defaultScenario from '../../examples/scenarios/llama3-70b_dgx-h100x8.json';

const examples = import.meta.glob('../../examples/scenarios/*.json', { eager: true, import: 'default' });

// For people and tests: `latest` is the scenario the form shows (compact JSON, null while a field
// is not a number), `rendered` the one whose estimate (or error) is on screen, `resolved` the
// engine's resolve() of it (null while the engine refuses it).
// `link` is the address of the scenario the form shows (with tokens and price), `linked` the
// scenario text it is for; `opened` says how the last address was opened ('default', 'link' or
// what was wrong with it), `opens` counts the addresses opened (the first, then each pasted one).
const stats = { updates: 0, lastUpdateMs: NaN, lastEngineMs: NaN, state: 'loading', latest: undefined, rendered: undefined,
  resolved: null, link: undefined, linked: undefined, opened: undefined, opens: 0, search: searchStats };
window.__stepcast = stats;

const EMBED = document.documentElement.classList.contains('embed');
let lastSent = null;
let lastReport = null;
let scenarioText = '';
let presets = null;
let defaultLabel = '';

function setStatus(kind, ...content) {
  const el = $('#status');
  if (kind === 'ok' && stats.state === 'ok') return;
  el.className = `status ${kind}`;
  el.replaceChildren(...content);
  el.hidden = kind === 'ok';
  stats.state = kind;
  document.body.dataset.state = kind;
}

/** The "calibrated" badge: what the engine fitted to the cluster's measurements, or nothing. */
function renderCalibrated(c) {
  const el = $('#calibrated');
  el.hidden = !c;
  if (!c) return;
  const pct = (x) => `${x > 0 ? '+' : x < 0 ? '−' : '±'}${Math.abs(x).toFixed(1)} %`;
  // The compute scale when it was fitted or given (or when it is all there is to say).
  const compute = `compute ×${c.compute_scale.toFixed(3)} (${pct(c.compute_change_pct)}${c.compute_scale_fitted ? `, fitted to ${c.runs?.length ?? 0} measured run${c.runs?.length === 1 ? '' : 's'}` : ''})`;
  const parts = [];
  if (c.network_scale_fitted || c.network_scale !== 1) parts.push(`network ×${c.network_scale.toFixed(3)} (${pct(c.network_change_pct)}${c.network_scale_fitted ? ', fitted' : ''})`);
  for (const [k, what] of [['intra_node_link', 'inside nodes'], ['inter_node_link', 'between nodes']])
    if (c[k]) parts.push(`measured link ${what}`);
  const gemm = { gemm_efficiency: 'bf16', fp8_gemm_efficiency: 'fp8', fp4_gemm_efficiency: 'fp4', gemm_overhead_us: 'per-kernel time' };
  if (c.gemm) parts.push(`measured GEMMs (${Object.keys(gemm).filter((k) => c.gemm[k]).map((k) => `${gemm[k]} ${pct(c.gemm[k].change_pct)}`).join(', ')})`);
  if (c.layer_profiles) parts.push(`measured layers (${c.layer_profiles_used} of ${c.layer_profiles} profiles of this plan's shape)`);
  if (c.compute_scale_fitted || c.compute_scale !== 1 || !parts.length) parts.unshift(compute);
  el.replaceChildren(h('span', { class: 'badge' }, 'Calibrated'), ` to your cluster: ${parts.join(', ')}.`);
}

/** The scaling chart of the plan on show, from the search worker (a newer plan supersedes it). */
async function requestScaling(text) {
  const data = await engine.scaling(text);
  if (data && text === stats.rendered) renderScaling(data);
  stats.scaling = data ? (data.error ? 'none' : data.nodes.length) : stats.scaling;
}

// Screen readers hear the headline numbers of each estimate (a polite live region), once typing
// pauses: a change a keystroke would otherwise be read out mid-word.
const ANNOUNCE_MS = 800;
let announceTimer = 0;
function announce(text) {
  clearTimeout(announceTimer);
  announceTimer = setTimeout(() => { $('#announce').textContent = text; }, ANNOUNCE_MS);
}

/** "Go to Heads": moves the focus to the field a problem went to. */
function focusButton(field) {
  if (!field) return null;
  const label = field.dataset.label ?? field.querySelector('label')?.textContent ?? 'the field';
  return h('button', { type: 'button', class: 'link', onclick: () => field.querySelector('input, select')?.focus() },
    `Go to ${label}`);
}

/** " (and 2 more problems, each at its field)" */
const more = (n) => (n > 1 ? ` (and ${n - 1} more problem${n > 2 ? 's' : ''}, each at its field)` : '');

function done(t0, engineMs, rendered) {
  stats.rendered = rendered;
  stats.updates += 1;
  stats.lastUpdateMs = performance.now() - t0;
  stats.lastEngineMs = engineMs;
  performance.measure('stepcast:update', { start: t0, end: performance.now() });
  document.body.dataset.updates = String(stats.updates);
}

async function update(t0 = performance.now()) {
  const tForm = performance.now();
  form.render();
  stats.lastFormMs = performance.now() - tForm;
  const { scenario, problems } = form.current();
  const text = JSON.stringify(scenario);
  // Already estimated (or on its way), e.g. the change event after the input events: leave the
  // page as it is (errors shown stay shown).
  if (!problems.length && text === lastSent) return;
  scenarioText = JSON.stringify(scenario, null, 2);
  $('#scenario-json').textContent = scenarioText;
  if (EMBED && !problems.length) $('#embed-title').textContent = exampleLabel(scenario, presets);
  stats.latest = problems.length ? null : text;
  if (problems.length) {
    lastSent = null;
    const placed = form.showLocal(problems);
    $('#results').classList.add('stale');
    renderSummaryBar('error', 'Not estimated: fix the highlighted field');
    setStatus('error', h('strong', null, 'Not estimated: '), `${problems[0].message.replace(/\.$/, '')} (see the highlighted field). `,
      focusButton(placed[0].field), ' The results below are for the last valid plan.');
    done(t0, NaN, null);
    if (!EMBED) requestSearch(null);
    return;
  }
  lastSent = text;
  stats.lastPrepMs = performance.now() - t0;
  const sent = JSON.parse(text); // what was sent, apart from the state (which the next change edits)
  let answer;
  try {
    const pending = engine.run(text);
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
  if (!r) {
    const first = placed[0];
    const message = first.hint ? `${first.message} (try: ${first.hint.replace(/\.$/, '')})` : first.message;
    renderSummaryBar('error', `Invalid plan: ${first.message}`);
    compare.show(null);
    $('#results').classList.add('stale');
    setStatus('error', h('strong', null, 'Invalid plan: '), h('span', { class: 'engine-message' }, message),
      more(placed.length), ' ', focusButton(first.field),
      h('span', { class: 'hint' }, lastReport ? ' The results below are for the last valid plan.' : ''));
  } else {
    lastReport = r;
    compare.show(r, sent, stats.linked === text ? stats.link : null);
    if (!EMBED) requestScaling(text);
    $('#results').classList.remove('stale');
    renderReport(r, { groups: form.groupInfo(), layout: form.layout(), given: (path) => form.applies({ needs: path }), links: presets.links });
    renderSoftware(r.plan.framework, sent.plan?.framework === undefined);
    renderCalibrated(r.calibration);
    form.showCalibrationWarnings(r.warnings);
    if (!EMBED) requestTraffic(text);
    renderSummaryBar(r.fits ? 'ok' : 'oom', (r.fits ? '' : 'Out of memory · ') + summaryText(r));
    announce(`${r.fits ? '' : 'Out of memory. '}${summaryText(r).replaceAll(' · ', ', ')}.`);
    if (r.fits) setStatus('ok');
    else {
      const worst = r.stages.reduce((a, s) => (s.memory_bytes.total / s.memory_bytes.capacity >
        a.memory_bytes.total / a.memory_bytes.capacity ? s : a));
      // Replica sets: the stages shown are the slowest set's; another set's GPUs may be the ones
      // that do not fit (the report says which).
      const set = (r.replicas ?? []).findIndex((x) => !x.fits);
      const gib = (b) => (b / 2 ** 30).toFixed(1);
      const what = worst.fits && set >= 0
        ? `replica set ${set} needs ${gib(r.replicas[set].memory_bytes)} GiB per GPU, but ${r.replicas[set].gpu} has ` +
          `${gib(r.replicas[set].capacity_bytes)} GiB.`
        : `stage ${worst.index} needs ${gib(worst.memory_bytes.total)} GiB per GPU, ` +
          `the GPU has ${(worst.memory_bytes.capacity / 2 ** 30).toFixed(0)} GiB.`;
      setStatus('oom', h('strong', null, 'Out of memory: '), `${what} This plan does not fit; ` +
        'try the distributed optimizer, recompute, more PP or TP.');
    }
  }
  stats.lastRenderMs = performance.now() - tAnswer;
  done(t0, answer.engineMs, text);
  // The plan search of this scenario, after a pause in the changes (its own worker).
  if (!EMBED) requestSearch(sent, text, r, answer.resolved);
}

/** The traffic matrix of the scenario on show, after its estimate (the card shows the latest). */
function requestTraffic(text) {
  engine.traffic(text).then((data) => {
    if (!data || text !== lastSent) return;
    renderTraffic(data, stats);
    stats.traffic.scenario = text;
  }, (err) => {
    stats.traffic = { error: String(err.message), scenario: text };
  });
}

/**
 * A name for an example that has none: "Llama 3 70B on 8 × NVIDIA DGX H100, TP 8 × PP 4" (groups
 * joined by " + ").
 */
function exampleLabel(s, presets) {
  const model = typeof s.model === 'string' ? presets.models.find((m) => m.id === s.model)?.name ?? s.model : s.model.name ?? 'custom model';
  const cluster = clusterGroups(s.cluster).map((group) => {
    const node = group.node ? presets.nodes.find((n) => n.id === group.node)?.name ?? group.node : `${group.gpus_per_node}-GPU nodes`;
    return `${group.nodes} × ${node.replace(/\s*\(.*\)$/, '').replace(/^(NVIDIA|AMD|Intel|Huawei) /, '')}`;
  }).join(' + ');
  const p = s.plan;
  return `${model} on ${cluster}, TP ${p.tp ?? 1} × PP ${p.pp ?? 1}`;
}

async function loadScenario(s) {
  await form.open(s);
  lastSent = null;
  update();
}

// Links -------------------------------------------------------------------------------------

// The address is written at most every 0.4 s: browsers limit replaceState (Safari: 100 calls in
// 30 s; beyond, it throws), and typing fast in a number field is many changes a second.
const URL_INTERVAL_MS = 400;
let currentScenario = null; // the last scenario read without a local error
let urlTimer = 0;
let urlWritten = 0;
// History: `userChanged` marks a write as the user's (an edit, Apply, an example), not the page's
// own (opening a link, back and forward). A user's write 1.5 s or more after their previous one
// starts a new history entry; closer ones are the same burst of typing and replace it.
const EDIT_BURST_MS = 1500;
let userChanged = false;
let lastUserWrite = -Infinity;
let startedFrom = null; // the example the plan started from (Reset goes back to it)

/** The address of the page without its fragment (and, for "Open in Stepcast", without ?embed). */
function pageBase(full = false) {
  const url = new URL(location.href);
  url.hash = '';
  if (full) {
    url.searchParams.delete('embed');
    url.searchParams.delete('controls');
  }
  return url.href.replace(/#$/, '');
}

/**
 * Writes the link into the address bar: replaceState, at most every 0.4 s while typing; a new
 * history entry (Apply, an import, an edit after a pause) at once, so that Back right after it
 * undoes it rather than skipping past it.
 */
function writeUrl(now = false) {
  const starts = () => !EMBED && userChanged && performance.now() - lastUserWrite >= EDIT_BURST_MS && location.hash.length > 1;
  const go = () => {
    clearTimeout(urlTimer);
    urlTimer = 0;
    // A scenario no link can carry leaves the address without a fragment (not a stale link).
    const target = stats.link ?? pageBase();
    if (target === location.href) {
      userChanged = false; // a change that gave the same link is no step of history
      return;
    }
    urlWritten = performance.now();
    // Not in an iframe: its entries would be the host page's back button.
    const push = starts();
    if (userChanged) lastUserWrite = urlWritten;
    userChanged = false;
    try {
      if (push) history.pushState(null, '', target);
      else history.replaceState(history.state, '', target);
      stats.historyLength = history.length;
    } catch { /* a browser's rate limit (Safari, Firefox): the next change writes it */ }
  };
  if (now || starts()) go();
  else if (!urlTimer) urlTimer = setTimeout(go, Math.max(0, URL_INTERVAL_MS - (performance.now() - urlWritten)));
}

/** Asks the engine for the link of the scenario on show (and the cost inputs), then writes it. */
async function syncLink(scenario = currentScenario, text = JSON.stringify(scenario)) {
  if (!scenario) return;
  currentScenario = scenario;
  const page = pageSettings($('#f-tokens').value, $('#f-price').value);
  // A link carries what the measured runs fitted (the scales), not the runs themselves.
  let linked = scenario;
  if (Array.isArray(scenario.calibration?.runs)) {
    const c = await engine.compactCalibration(JSON.stringify(scenario));
    if (c.scenario) linked = c.scenario;
  }
  const r = await engine.toLink(linked, page, pageBase(), 'link');
  if (!r) return; // superseded
  const copy = $('#copy-link');
  if (r.error) {
    stats.link = null;
    stats.linked = text;
    copy.disabled = true;
    copy.title = `This scenario cannot be written as a link: ${linkMessage(r.error)}.`;
    $('#cli-link').textContent = copy.title;
    writeUrl();
    return;
  }
  stats.link = r.link;
  stats.linked = text;
  if (stats.rendered === text && lastReport) compare.show(lastReport, scenario, r.link);
  copy.disabled = false;
  copy.title = '';
  copy.dataset.link = r.link;
  const fragment = r.link.slice(r.link.indexOf('#'));
  $('#open-full').href = pageBase(true) + fragment;
  $('#cli-link').textContent = `stepcast estimate --link '${r.link}'`;
  writeUrl();
}

/** A message about the link the page was opened with, kept until dismissed or a new link. */
function linkNotice(...content) {
  const box = $('#link-status');
  if (!content.length) {
    box.hidden = true;
    return;
  }
  box.replaceChildren(...content, ' ', h('button', { type: 'button', class: 'link', onclick: () => linkNotice() }, 'Dismiss'));
  box.hidden = false;
}

/**
 * Opens the scenario in the address (or `url`): true when it is on show. A link that cannot be
 * read, or names a preset that does not exist, leaves a message and false.
 */
async function openLink(url = location.href) {
  const hash = url.indexOf('#');
  if (hash < 0 || hash === url.length - 1) return false;
  let r;
  try {
    r = await engine.fromLink(url);
  } catch (err) {
    r = { error: { message: String(err.message) } };
  }
  const problem = r.error ? `it could not be read (${linkMessage(r.error)})` : linkProblem(r.scenario, presets);
  if (problem) {
    stats.opened = problem;
    linkNotice(h('strong', null, 'This link does not open a scenario: '), `${problem}. `,
      `Showing ${defaultLabel} instead.`);
    return false;
  }
  try {
    await form.open(r.scenario);
  } catch (err) {
    stats.opened = `the page cannot show it (${err.message})`;
    linkNotice(h('strong', null, 'This link does not open a scenario: '), `${stats.opened}. Showing ${defaultLabel} instead.`);
    return false;
  }
  if (typeof r.page?.tokens === 'number') $('#f-tokens').value = billions(r.page.tokens);
  if (typeof r.page?.price_per_gpu_hour === 'number') $('#f-price').value = String(r.page.price_per_gpu_hour);
  stats.opened = 'link';
  // A key that does nothing for the link's model (EP for a dense one) is left out, as the form
  // leaves it: said, not silently (the CLI refuses such a scenario).
  const shown = form.current().scenario;
  const dropped = conditional().filter((k) => getIn(r.scenario, k.path) !== undefined && getIn(shown, k.path) === undefined)
    .map((k) => `${k.path}=${JSON.stringify(getIn(r.scenario, k.path))} (it needs ${k.needs})`);
  linkNotice(...(dropped.length ? [h('strong', null, 'Left out of this link, as it does nothing here: '), `${dropped.join(', ')}.`] : []));
  $('#examples').value = '';
  lastSent = null;
  update();
  return true;
}

/** The loading bar in the status line: the .wasm's bytes so far. Returns the function that stops it. */
function showLoading() {
  const kb = (n) => `${Math.round(n / 1024).toLocaleString('en-US')} KB`;
  return engine.onLoading(({ loaded, total }) => {
    $('#engine-progress').value = loaded / total;
    $('#engine-bytes').textContent = `${kb(loaded)} of ${kb(total)}`;
  });
}

/** Registers the service worker once the engine is in: its precache then finds every file in the HTTP cache. */
function registerServiceWorker() {
  if (import.meta.env.PROD && 'serviceWorker' in navigator && location.protocol.startsWith('http'))
    navigator.serviceWorker.register('./sw.js').catch(() => { /* the page works without it */ });
}

async function init() {
  let ready;
  const stopLoading = showLoading();
  try {
    ready = await engine.ready();
  } catch (err) {
    setStatus('error', h('strong', null, 'The engine did not load: '), String(err.message));
    return;
  } finally {
    stopLoading();
    registerServiceWorker();
  }
  $('#version').textContent = `engine ${ready.version}`;
  presets = ready.presets;
  defaultLabel = `the default scenario (${exampleLabel(defaultScenario, presets)})`;
  form.buildForm(ready.presets, ready.schema, (t) => {
    $('#examples').value = '';
    userChanged = true;
    update(t);
  });
  if (EMBED) embedLayout();
  else initSearch(ready.presets);
  // Pins live in the address (?compare=): the page's base, so every link written carries them.
  compare.init(ready.presets, () => {
    history.replaceState(history.state, '', compare.addressWith(location.href));
    syncLink();
  });
  const select = $('#examples');
  for (const [path, s] of Object.entries(examples).sort()) {
    const label = s.name ?? exampleLabel(s, ready.presets);
    select.append(h('option', { value: path }, s === defaultScenario ? `${label} (the default)` : label));
  }
  // A long example name is cut in the closed menu: the whole of it on hover.
  const titleOfChoice = () => { select.title = select.selectedOptions[0]?.textContent ?? ''; };
  select.addEventListener('change', titleOfChoice);
  select.addEventListener('change', () => {
    if (!select.value) return;
    userChanged = true;
    lastUserWrite = -Infinity; // an example is a new entry, however soon after an edit
    startedFrom = select.value;
    loadScenario(examples[select.value]);
  });
  $('#reset-example').addEventListener('click', () => {
    const path = startedFrom ?? defaultPath();
    userChanged = true;
    lastUserWrite = -Infinity;
    select.value = path;
    loadScenario(examples[path]);
  });
  roveTips($('#results'));
  if (!EMBED) {
    initImportExport(() => structuredClone(form.current().scenario), async (s) => {
      userChanged = true;
      lastUserWrite = -Infinity;
      $('#examples').value = '';
      await loadScenario(s);
    });
  }
  $('#timeline-tip').replaceWith(tip('timeline'));
  $('#stagemap-tip').replaceWith(tip('stage_map'));

  $('#cost-form').addEventListener('input', () => {
    userChanged = true;
    renderCost();
    syncLink();
  });
  $('#copy-link').addEventListener('click', async () => {
    const button = $('#copy-link');
    if (!stats.link) return;
    writeUrl(true);
    try {
      await navigator.clipboard.writeText(stats.link);
      button.textContent = 'Link copied';
    } catch {
      button.textContent = 'Copy from the address bar';
    }
    setTimeout(() => { button.textContent = 'Copy link'; }, 1500);
  });
  // A link pasted into the address bar of the open page (only the fragment changes).
  // The event's own URL: a throttled replaceState of the previous scenario may already have
  // rewritten location.href, and must not overwrite the pasted link afterwards.
  window.addEventListener('hashchange', (e) => {
    clearTimeout(urlTimer);
    urlTimer = 0;
    userChanged = false; // Back, Forward or a pasted link: the page's own writes follow
    if (e.newURL === stats.link || new URL(e.newURL).hash.length <= 1) return;
    if (location.href !== e.newURL) history.replaceState(history.state, '', e.newURL);
    openAddress();
  });
  // Leaving: the address holds the latest change even if its write was still waiting.
  window.addEventListener('pagehide', () => writeUrl(true));

  $('#copy-json').addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(scenarioText + '\n');
      $('#copy-json').textContent = 'Copied';
    } catch {
      $('#copy-json').textContent = 'Select the text to copy';
    }
    setTimeout(() => { $('#copy-json').textContent = 'Copy'; }, 1500);
  });
  $('#download-json').addEventListener('click', () => save('scenario.json', scenarioText + '\n', 'application/json'));
  $('#open-json').addEventListener('change', async (e) => {
    const file = e.target.files?.[0];
    if (!file) return;
    try {
      const s = JSON.parse(await file.text());
      const problem = linkProblem(s, presets);
      if (problem) throw new Error(problem);
      await loadScenario(s);
    } catch (err) {
      setStatus('error', h('strong', null, `${file.name}: `), `not a scenario this page can show (${err.message}).`);
    }
    e.target.value = '';
  });

  // Printing shows what the tables hold, not their closed disclosures.
  window.addEventListener('beforeprint', () => { for (const d of $$('#results details')) d.open = true; });
  matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
    resetColors();
    requestAnimationFrame(drawTimeline);
  });

  await openAddress();
  const pinProblems = await compare.open(location.href);
  if (pinProblems.length) linkNotice(h('strong', null, 'Some pinned plans of this link did not open: '), `${pinProblems.join('; ')}.`);
}

const defaultPath = () => Object.keys(examples).find((k) => examples[k] === defaultScenario) ?? '';

/** Shows the scenario of the address, or the default one; counts in stats.opens when done. */
async function openAddress() {
  if (!(await openLink())) {
    if (!location.hash || location.hash === '#') stats.opened = 'default';
    await loadScenario(defaultScenario);
    $('#examples').value = defaultPath();
    $('#examples').title = $('#examples').selectedOptions[0]?.textContent ?? '';
  }
  stats.opens += 1;
}

// The iframe mode (?embed=1): the controls named in ?controls= (a few key ones by default).
const CONTROL_PATHS = {
  model: 'model', node: 'cluster.node', nodes: 'cluster.nodes', gpus_per_node: 'cluster.gpus_per_node',
  seq_len: 'seq_len',
};
const EMBED_CONTROLS = 'nodes,tp,pp,micro_batch,global_batch,recompute';

function embedLayout() {
  const wanted = (new URLSearchParams(location.search).get('controls') || EMBED_CONTROLS)
    .split(',').map((c) => c.trim()).filter(Boolean);
  const paths = new Set(wanted.map((c) => CONTROL_PATHS[c] ?? `plan.${c}`));
  for (const el of $$('#inputs .field')) el.hidden = !paths.has(el.dataset.path);
  const any = (el) => $$('.field[data-path]', el).some((f) => paths.has(f.dataset.path));
  for (const fs of $$('#inputs fieldset')) fs.hidden = !any(fs);
  for (const d of $$('#inputs details')) {
    d.hidden = !any(d);
    d.open = true;
  }
  $('#f-model').removeAttribute('size');
}

init();
