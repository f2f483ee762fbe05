// Calibrate to my cluster: the scenario's `calibration` (the engine's, see docs/scenario.md). Paste
// nccl-tests output and the engine fits the link it measured (inside a node or between nodes,
// from its ranks' hosts), which replaces the presets' link of that tier; give the measured time of
// one iteration of the plan on show (and of other plans) and the engine fits the cluster's compute
// scale (and, from plans that differ in communication, a network scale), then predicts every plan
// with them. What was fitted shows as a badge on the estimate (main.js); the link carries the
// fitted scales and links (compactCalibration), not the raw runs.
import { $, fill, h } from '../dom.js';
import * as engine from '../engine.js';
import { save } from '../download.js';
import { onClick } from './bind.js';
import { state } from './state.js';

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const calibration = () => (isObject(state.scenario.calibration) ? state.scenario.calibration : null);

/** Sets (or, when empty, removes) the scenario's calibration. */
function setCalibration(c) {
  const keep = Object.fromEntries(Object.entries(c ?? {}).filter(([, v]) => v !== undefined && !(Array.isArray(v) && !v.length)));
  if (Object.keys(keep).length) state.scenario.calibration = keep;
  else delete state.scenario.calibration;
  state.lastChanged = 'calibration';
}

function say(kind, text) {
  const el = $('#cal-status');
  el.className = `cal-status ${kind}`;
  el.setAttribute('role', kind === 'error' ? 'alert' : 'status');
  el.textContent = text;
  el.hidden = !text;
}

/** The plan on show in words, for the list of measured runs. */
function planWords(p = {}) {
  return [`TP ${p.tp ?? 1}`, `PP ${p.pp ?? 1}`, p.dp !== undefined ? `DP ${p.dp}` : null, p.vpp > 1 ? `VPP ${p.vpp}` : null,
    p.cp > 1 ? `CP ${p.cp}` : null, `micro-batch ${p.micro_batch ?? 1}`, p.global_batch !== undefined ? `global batch ${p.global_batch}` : null]
    .filter(Boolean).join(' · ');
}

// nccl-tests: fitted by the engine; the tier comes from the output (one host or several).
let fitting = null;
async function fitNccl(notify) {
  const text = $('#cal-nccl').value;
  if (!text.trim()) return say('error', 'Paste the output of an nccl-tests run (all_reduce_perf, all_gather_perf, ...) first.');
  const mine = (fitting = {});
  const r = await engine.ncclLink([{ name: 'pasted output', text }]);
  if (mine !== fitting) return undefined;
  if (r.error) return say('error', `Not nccl-tests output this page can read: ${r.error.message}`);
  const key = r.link.scope === 'inter_node' ? 'inter_node_link' : 'intra_node_link';
  setCalibration({ ...calibration(), [key]: r.link });
  const worst = 100 * Math.max(0, ...(r.checks ?? []).map((c) => Math.abs(c.max_busbw_error ?? 0)));
  say('ok', `Fitted the ${key === 'inter_node_link' ? 'link between nodes' : 'link inside a node'}: ` +
    `${r.link.busbw_GBps.toFixed(1)} GB/s bus bandwidth, ${(r.link.half_peak_bytes / 2 ** 20).toFixed(2)} MiB to half of it` +
    `${r.checks?.length ? `; it reproduces the measured bus bandwidths from 1 MiB within ${worst.toFixed(1)} %` : ''}.`);
  notify();
  return undefined;
}

function addRun() {
  const field = $('#cal-measured');
  const v = Number(field.value);
  if (field.value.trim() === '' || !Number.isFinite(v) || v <= 0) {
    say('error', `The measured iteration time must be a positive number of seconds${field.value.trim() ? ` (not “${field.value.trim().slice(0, 20)}”)` : ''}.`);
    return false;
  }
  const plan = structuredClone(state.scenario.plan ?? {});
  // How many runs a calibration may hold is the engine's rule: past it, its error shows here.
  const runs = [...(calibration()?.runs ?? []), { plan, measured_iteration_s: v }];
  setCalibration({ ...calibration(), runs });
  field.value = '';
  say('ok', `Added: ${planWords(plan)} measured at ${v} s per iteration.`);
  return true;
}

function removeRun(i) {
  const runs = (calibration()?.runs ?? []).filter((_, k) => k !== i);
  setCalibration({ ...calibration(), runs });
}

/** Builds the calibration fields into #calibration-fields. */
export function build() {
  fill($('#calibration-fields'),
    h('p', { class: 'hint' }, 'Measured on your cluster? The estimates then come from it, not from datasheets.'),
    h('div', { class: 'field whole', 'data-path': 'calibration', 'data-label': 'Calibration' },
      h('label', { for: 'cal-measured' }, 'Measured time of one iteration of the plan on show'),
      h('div', { class: 'control' },
        h('input', { id: 'cal-measured', type: 'number', min: '0', step: 'any', inputmode: 'decimal', 'data-local': 'true' }),
        h('span', { class: 'unit' }, 's'),
        onClick(h('button', { type: 'button', id: 'cal-add-run' }, 'Add as a measured run'), addRun)),
      h('ul', { id: 'cal-runs', class: 'cal-runs' }),
      h('label', { for: 'cal-nccl' }, 'nccl-tests output (inside a node or across nodes)'),
      h('textarea', { id: 'cal-nccl', rows: 4, spellcheck: 'false', 'data-local': 'true',
        placeholder: '# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 ...' }),
      h('div', { class: 'buttons' },
        h('button', { type: 'button', id: 'cal-nccl-fit' }, 'Fit the link'),
        onClick(h('button', { type: 'button', id: 'cal-clear' }, 'Clear the calibration'), () => {
          setCalibration(null);
          say('ok', 'Calibration cleared: the presets again.');
        }),
        h('button', { type: 'button', id: 'cal-download', onclick: () => save('calibration.json',
          `${JSON.stringify({ calibration: calibration() ?? {} }, null, 2)}\n`, 'application/json') }, 'Download JSON')),
      h('p', { id: 'cal-status', class: 'cal-status', hidden: true }),
      h('ul', { id: 'cal-warnings', class: 'cal-warnings', role: 'status', hidden: true }),
      h('p', { class: 'error', id: 'calibration-error', role: 'alert', hidden: true })));
}

/** Wires the button that needs the engine (the others change the state through onClick). */
export function wire(notify) {
  $('#cal-nccl-fit').addEventListener('click', () => fitNccl(notify));
}

/** The estimate's warnings about its calibration (a run predicted out of memory, runs that cannot
 * separate compute from network), next to the runs they are about; none after an error. */
export function showWarnings(warnings = []) {
  const list = $('#cal-warnings');
  const mine = warnings.filter((w) => w.startsWith('calibration'));
  list.hidden = mine.length === 0;
  fill(list, mine.map((w) => h('li', null, w)));
}

/** Shows the scenario's calibration: its measured runs, each with a remove button. */
export function render() {
  const runs = calibration()?.runs ?? [];
  const list = $('#cal-runs');
  const key = JSON.stringify(runs);
  if (list.dataset.key === key) return;
  list.dataset.key = key;
  fill(list, runs.map((run, i) => h('li', null,
    `${planWords(run.plan ?? run.scenario?.plan)}: ${run.measured_iteration_s} s `,
    onClick(h('button', { type: 'button', class: 'link', 'aria-label': `Remove measured run ${i + 1}` }, 'Remove'), () => removeRun(i)))));
}
