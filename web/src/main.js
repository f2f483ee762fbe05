// Stepcast's page: wires the inputs to the engine worker and the results. Every change
// re-estimates at once (no button); the time from the input event to the rendered result is
// recorded as the performance measure "stepcast:update".
import './style.css';

import { $, h } from './dom.js';
import * as engine from './engine.js';
import { buildForm, clearErrors, fieldFor, readScenario, refreshHints, showError, writeScenario } from './form.js';
import { drawTimeline, renderCost, renderReport, renderSummaryBar, summaryText } from './results.js';
import { resetColors } from './timeline.js';
import { tip } from './tooltip.js';
import defaultScenario from '../examples/scenarios/llama3-70b_dgx-h100x8.json';

const examples = import.meta.glob('../examples/scenarios/*.json', { eager: true, import: 'default' });

// For people and tests: `latest` is the scenario the form shows (compact JSON, null while a field
// is not a number), `rendered` the one whose estimate (or error) is on screen.
const stats = { updates: 0, lastUpdateMs: NaN, lastEngineMs: NaN, state: 'loading', latest: undefined, rendered: undefined };
window.__stepcast = stats;

let lastSent = null;
let lastReport = null;
let scenarioText = '';

function setStatus(kind, ...content) {
  const el = $('#status');
  if (kind === 'ok' && stats.state === 'ok') return;
  el.className = `status ${kind}`;
  el.replaceChildren(...content);
  el.hidden = kind === 'ok';
  stats.state = kind;
  document.body.dataset.state = kind;
}

function focusButton(path) {
  const field = fieldFor(path);
  if (!field) return null;
  const label = field.querySelector('label')?.textContent ?? path;
  return h('button', { type: 'button', class: 'link', onclick: () => field.querySelector('input, select')?.focus() },
    `Go to ${label}`);
}

function done(t0, engineMs, rendered) {
  stats.rendered = rendered;
  stats.updates += 1;
  stats.lastUpdateMs = performance.now() - t0;
  stats.lastEngineMs = engineMs;
  performance.measure('stepcast:update', { start: t0, end: performance.now() });
  document.body.dataset.updates = String(stats.updates);
}

async function update(t0 = performance.now()) {
  const { scenario, errors } = readScenario();
  refreshHints(lastReport);
  const text = JSON.stringify(scenario);
  // Already estimated (or on its way), e.g. the change event after the input events: leave the
  // page as it is (errors shown stay shown).
  if (!errors.length && text === lastSent) return;
  scenarioText = JSON.stringify(scenario, null, 2);
  $('#scenario-json').textContent = scenarioText;
  stats.latest = errors.length ? null : text;
  if (errors.length) {
    lastSent = null;
    clearErrors();
    for (const e of errors) showError(e.path, e.message);
    $('#results').classList.add('stale');
    renderSummaryBar('error', 'Not estimated: fix the highlighted field');
    setStatus('error', h('strong', null, 'Not estimated: '), `${errors[0].message.replace(/\.$/, '')} (see the highlighted field). `,
      'The results below are for the last valid plan.');
    done(t0, NaN, null);
    return;
  }
  lastSent = text;
  stats.lastPrepMs = performance.now() - t0;
  let answer;
  try {
    answer = await engine.estimate(text);
  } catch (err) {
    setStatus('error', h('strong', null, 'The engine failed: '), String(err.message));
    return;
  }
  if (!answer) return; // superseded by a newer change
  const tAnswer = performance.now();
  stats.lastWaitMs = tAnswer - t0;
  stats.lastWorkerMs = answer.workerMs;
  const r = answer.result;
  clearErrors();
  if (r.error) {
    const placed = showError(r.error.path, r.error.message);
    renderSummaryBar('error', `Invalid plan: ${r.error.message}`);
    $('#results').classList.add('stale');
    setStatus('error', h('strong', null, 'Invalid plan: '), h('span', { class: 'engine-message' }, r.error.message), ' ',
      placed ? focusButton(r.error.path) : null,
      h('span', { class: 'hint' }, lastReport ? ' The results below are for the last valid plan.' : ''));
    refreshHints(null);
  } else {
    lastReport = r;
    $('#results').classList.remove('stale');
    renderReport(r);
    refreshHints(r);
    renderSummaryBar(r.fits ? 'ok' : 'oom', (r.fits ? '' : 'Out of memory · ') + summaryText(r));
    if (r.fits) setStatus('ok');
    else {
      const worst = r.stages.reduce((a, s) => (s.memory_bytes.total / s.memory_bytes.capacity >
        a.memory_bytes.total / a.memory_bytes.capacity ? s : a));
      setStatus('oom', h('strong', null, 'Out of memory: '),
        `stage ${worst.index} needs ${(worst.memory_bytes.total / 2 ** 30).toFixed(1)} GiB per GPU, ` +
        `the GPU has ${(worst.memory_bytes.capacity / 2 ** 30).toFixed(0)} GiB. This plan does not fit; ` +
        'try the distributed optimizer, recompute, more PP or TP.');
    }
  }
  stats.lastRenderMs = performance.now() - tAnswer;
  done(t0, answer.engineMs, text);
}

/** A name for an example that has none: "Llama 3 70B on 8 × NVIDIA DGX H100, TP 8 × PP 4". */
function exampleLabel(s, presets) {
  const model = typeof s.model === 'string' ? presets.models.find((m) => m.id === s.model)?.name ?? s.model : s.model.name ?? 'custom model';
  const group = s.cluster.groups ? s.cluster.groups[0] : s.cluster;
  const node = group.node ? presets.nodes.find((n) => n.id === group.node)?.name ?? group.node : `${group.gpus_per_node}-GPU nodes`;
  const p = s.plan;
  return `${model} on ${group.nodes} × ${node.replace(/\s*\(.*\)$/, '')}, TP ${p.tp ?? 1} × PP ${p.pp ?? 1}`;
}

function loadScenario(s) {
  writeScenario(s);
  lastSent = null;
  update();
}

async function init() {
  let ready;
  try {
    ready = await engine.ready();
  } catch (err) {
    setStatus('error', h('strong', null, 'The engine did not load: '), String(err.message));
    return;
  }
  $('#version').textContent = `engine ${ready.version}`;
  buildForm(ready.presets);
  const select = $('#examples');
  for (const [path, s] of Object.entries(examples).sort()) {
    const label = s.name ?? exampleLabel(s, ready.presets);
    select.append(h('option', { value: path }, s === defaultScenario ? `${label} (the default)` : label));
  }
  select.addEventListener('change', () => { if (select.value) loadScenario(examples[select.value]); });
  $('#timeline-tip').replaceWith(tip('timeline'));

  const form = $('#inputs');
  const onEdit = (e) => {
    if (e.target.dataset?.local) return;
    $('#examples').value = '';
    update(e.timeStamp || performance.now());
  };
  form.addEventListener('input', onEdit);
  form.addEventListener('change', onEdit);
  $('#cost-form').addEventListener('input', renderCost);

  $('#copy-json').addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(scenarioText + '\n');
      $('#copy-json').textContent = 'Copied';
    } catch {
      $('#copy-json').textContent = 'Select the text to copy';
    }
    setTimeout(() => { $('#copy-json').textContent = 'Copy'; }, 1500);
  });
  $('#download-json').addEventListener('click', () => {
    const url = URL.createObjectURL(new Blob([scenarioText + '\n'], { type: 'application/json' }));
    const a = h('a', { href: url, download: 'scenario.json' });
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  });
  $('#open-json').addEventListener('change', async (e) => {
    const file = e.target.files?.[0];
    if (!file) return;
    try {
      loadScenario(JSON.parse(await file.text()));
    } catch (err) {
      setStatus('error', h('strong', null, `${file.name}: `), `not a scenario this page can show (${err.message}).`);
    }
    e.target.value = '';
  });

  matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
    resetColors();
    requestAnimationFrame(drawTimeline);
  });

  loadScenario(defaultScenario);
  select.value = Object.keys(examples).find((k) => examples[k] === defaultScenario) ?? '';
}

init();

if (import.meta.env.PROD && 'serviceWorker' in navigator && location.protocol.startsWith('http')) {
  window.addEventListener('load', () => {
    navigator.serviceWorker.register('./sw.js').catch(() => { /* the page works without it */ });
  });
}
