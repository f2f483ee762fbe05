// Calibrate to my cluster: the scenario's `calibration` (the engine's, see docs/scenario.md). Paste
// nccl-tests output and the engine fits the link it measured (inside a node or between nodes,
// from its ranks' hosts), which replaces the presets' link of that tier; paste a GEMM table and it
// fits the GPU's GEMM efficiencies; give one layer's measured kernel times for the plan's shape
// and they replace the roofline's layer compute on that GPU (HATP's input); give the measured time of
// one iteration of the plan on show (and of other plans) and the engine fits the cluster's compute
// scale (and, from plans that differ in communication, a network scale), then predicts every plan
// with them. What was fitted shows as a badge on the estimate (app/calibration_badge.js); the link
// carries the fitted scales and links (compactCalibration), not the raw runs: a page opened from
// it says so beside the empty list of runs. Wrong input is refused here with the reason (issue 37
// item 6): nccl-tests output from another GPU than the cluster's (the engine compares the names, as
// `calibrate --gpu` does), and a measured time too far off the estimate either way (the engine's
// bound, from the schema).
import { $, fill, h } from '../ui/dom.js';
import { save } from '../ui/download.js';
import { onClick } from './bind.js';
import { state } from './state.js';
import { calibrationBound } from '../scenario/schema.js';

// How far a measured iteration may be from the estimate of its plan, either way: the engine's own
// bound (calibrate.h's kMaxMeasuredOverPredicted, in the schema document). The engine refuses such
// a run as an error of the whole scenario; checked here against the estimate on show, it is
// refused before it enters the scenario, and the plan stays estimated.
const maxOff = () => calibrationBound()?.max_measured_over_predicted ?? Infinity;

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

// A model with both dense and MoE layers (DeepSeek-V3's first three are dense): a profile is of
// one kind, as the engine reads `layers` (all, dense, moe), and the panel asks which.
const mixedLayers = (m) => m?.moe_layers > 0 && m.moe_layers < m.layers; // (the resolved model's count)
const KINDS = new Map([['all', ''], ['dense', 'dense '], ['moe', 'MoE ']]); // (kind: the scenario's text)
const layerWords = (kind = 'all') => `one ${KINDS.get(kind) ?? ''}layer`;

// A layer profile: one layer's measured kernel times, for the shape of the plan on show.
function addProfile() {
  // Milliseconds to seconds as the decimal text says (6.1 ms is 0.0061 s, not 0.006099999...).
  const [fwd, bwd] = ['#cal-fwd', '#cal-bwd'].map((id) => Number(`${$(id).value.trim()}e-3`));
  const r = state.resolved;
  if (!(fwd > 0 && bwd > 0)) return say('error', 'The forward and backward times of one layer must be positive numbers of milliseconds.'), false;
  if (!r) return say('error', 'Fix the scenario first: a layer profile takes the shape of the plan on show.'), false;
  const p = r.scenario.plan;
  const layers = mixedLayers(r.model) ? $('#cal-layers').value : 'all';
  const profile = { gpu: $('#cal-gpu').value || r.groups[0].gpu, micro_batch: p.micro_batch, seq_len: r.model.seq_len, tp: p.tp, cp: p.cp,
    ...(layers === 'all' ? {} : { layers }), forward_s: fwd, backward_s: bwd };
  setCalibration({ ...calibration(), layer_profiles: [...(calibration()?.layer_profiles ?? []), profile] });
  say('ok', `Added: ${layerWords(layers)} on the ${profile.gpu} at micro-batch ${p.micro_batch}, sequence ${r.model.seq_len}, TP ${p.tp}, CP ${p.cp}.`);
  return true;
}

function addRun() {
  const field = $('#cal-measured');
  const v = Number(field.value);
  if (field.value.trim() === '' || !Number.isFinite(v) || v <= 0) {
    say('error', `The measured iteration time must be a positive number of seconds${field.value.trim() ? ` (not “${field.value.trim().slice(0, 20)}”)` : ''}.`);
    return false;
  }
  const predicted = state.predicted_s;
  const off = maxOff();
  if (predicted > 0 && (v > off * predicted || v < predicted / off)) {
    say('error', `Not added: ${v} s is ${v > predicted ? `${+(v / predicted).toPrecision(3)} times` : `1/${+(predicted / v).toPrecision(3)} of`} ` +
      `the ${+predicted.toPrecision(3)} s Stepcast estimates for the plan on show; a measured iteration within ${off}× either way is taken. ` +
      'Check that it is one iteration of this plan, in seconds.');
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

function remove(key, i) {
  setCalibration({ ...calibration(), [key]: (calibration()?.[key] ?? []).filter((_, k) => k !== i) });
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
      h('p', { id: 'cal-runs-left', class: 'hint', hidden: true }),
      h('label', { for: 'cal-fwd' }, 'Measured kernel time of one layer, one micro-batch of the plan on show'),
      h('div', { class: 'control' },
        h('select', { id: 'cal-gpu', 'aria-label': 'The GPU profiled', 'data-local': 'true' }),
        h('select', { id: 'cal-layers', 'aria-label': 'The layers profiled', 'data-local': 'true', hidden: true },
          [...KINDS].map(([v, t]) => h('option', { value: v }, t.trim() || 'all'))),
        h('input', { id: 'cal-fwd', type: 'number', min: '0', step: 'any', placeholder: 'forward', 'aria-label': 'Forward', 'data-local': 'true' }),
        h('input', { id: 'cal-bwd', type: 'number', min: '0', step: 'any', placeholder: 'backward', 'aria-label': 'Backward', 'data-local': 'true' }),
        h('span', { class: 'unit' }, 'ms'),
        onClick(h('button', { type: 'button', id: 'cal-add-profile' }, 'Add as a layer profile'), addProfile)),
      h('ul', { id: 'cal-profiles', class: 'cal-runs' }),
      h('label', { for: 'cal-nccl' }, 'nccl-tests output (inside a node or across nodes)'),
      h('textarea', { id: 'cal-nccl', rows: 4, spellcheck: 'false', 'data-local': 'true',
        placeholder: '# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 ...' }),
      h('div', { class: 'buttons' },
        h('button', { type: 'button', id: 'cal-nccl-fit' }, 'Fit the link')),
      h('label', { for: 'cal-gemm' }, 'GEMM table (m,n,k,dtype,tflops) from one GPU of the cluster'),
      h('textarea', { id: 'cal-gemm', rows: 3, spellcheck: 'false', 'data-local': 'true', placeholder: 'm,n,k,dtype,tflops\n8192,8192,8192,bf16,690.5' }),
      h('div', { class: 'buttons' },
        h('button', { type: 'button', id: 'cal-gemm-fit' }, 'Fit the GEMMs'),
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

/** Wires the buttons that need the engine (the others change the state through onClick): their
 * code (calibration_fit.js) loads on the first click, off the first visit. */
export function wire(notify) {
  const fit = (name) => async () => (await import('./calibration_fit.js'))[name](notify, { say, setCalibration, calibration });
  $('#cal-nccl-fit').addEventListener('click', fit('fitNccl'));
  $('#cal-gemm-fit').addEventListener('click', fit('fitGemm'));
}

/** The estimate's warnings about its calibration (a run predicted out of memory, runs that cannot
 * separate compute from network), next to the runs they are about; none after an error. */
export function showWarnings(warnings = []) {
  const list = $('#cal-warnings');
  const mine = warnings.filter((w) => w.startsWith('calibration'));
  list.hidden = mine.length === 0;
  fill(list, mine.map((w) => h('li', null, w)));
}

/** A list of the calibration's entries under `key` (each a `noun`), in words with a remove button. */
function renderList(id, key, noun, words) {
  const items = calibration()?.[key] ?? [];
  const list = $(id);
  const text = JSON.stringify(items);
  if (list.dataset.key === text) return;
  list.dataset.key = text;
  fill(list, items.map((item, i) => h('li', null, `${words(item)} `,
    onClick(h('button', { type: 'button', class: 'link', 'aria-label': `Remove ${noun} ${i + 1}` }, 'Remove'), () => remove(key, i)))));
}

/** Shows the scenario's calibration: its measured runs and layer profiles; the GPUs to profile. */
export function render() {
  renderList('#cal-runs', 'runs', 'measured run', (run) => `${planWords(run.plan ?? run.scenario?.plan)}: ${run.measured_iteration_s} s`);
  // Scales with no runs: what a link carries of runs (their fit), said where the runs would be.
  const c = calibration();
  const scales = [['compute', c?.compute_scale], ['network', c?.network_scale]].filter(([, x]) => x !== undefined);
  const left = $('#cal-runs-left');
  left.hidden = !scales.length || !!c?.runs?.length;
  left.textContent = left.hidden ? '' : `The link holds the scales fitted to your measured runs (${scales.map(([k, x]) => `${k} ×${x}`).join(', ')}), ` +
    'not the runs themselves: links stay short. Add the runs again to refit, or Clear to drop the scales.';
  renderList('#cal-profiles', 'layer_profiles', 'layer profile', (l) => `${layerWords(l.layers)} on ${l.gpu}, TP ${l.tp ?? 1} · CP ${l.cp ?? 1} · micro-batch ${l.micro_batch} · sequence ${l.seq_len ?? 'the scenario\'s'}: ` +
    `${+(l.forward_s * 1e3).toPrecision(4)} ms forward, ${+(l.backward_s * 1e3).toPrecision(4)} ms backward`);
  // Dense or MoE: asked only of a model that has both (every other profile is of all its layers).
  const layers = $('#cal-layers');
  layers.hidden = !mixedLayers(state.resolved?.model);
  const gpus = [...new Set((state.resolved?.groups ?? []).map((g) => g.gpu))];
  const select = $('#cal-gpu');
  select.hidden = gpus.length < 2;  // one GPU type: the list of profiles names it
  if (gpus.length && select.dataset.key !== gpus.join()) {
    select.dataset.key = gpus.join();
    fill(select, gpus.map((g) => h('option', { value: g }, g)));
  }
}
