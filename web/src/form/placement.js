// Where the work runs (plan.stages / plan.replicas): with one group, an even split (the default)
// or layers per stage; with several, the pipeline split across the groups or replica sets on
// them. Left out of the scenario, the engine places them (resolve() says where: stages in Megatron
// rank order, or replica sets when PP is 1) and the maps show its placement, read-only in "auto";
// the first edit of a map writes the engine's placement into the scenario and changes it there.
import { $, $$, fill, h } from '../ui/dom.js';
import * as engine from '../engine/bridge.js';
import { groupColor } from '../scenario/groups.js';
import { plainDefault } from '../scenario/schema.js';
import { tip } from '../ui/tooltip.js';
import { on, onClick, notify } from './bind.js';
import { groupInfo } from './cluster.js';
import { errorLines, field, numberInput, put, readNumber, setText, show } from './fields.js';
import { groups, markLocal, plan, state } from './state.js';

// Map rows are built up to this many (a typo like PP 9999 builds none).
const MAX_ROWS = 512;
let lastMode = 'stages'; // the mode shown while the engine refuses a plan that leaves it to the engine
let rowsKey = '';
let optionsKey = '';
let note = null; // {text, for}: what the last "Place by GPU count" of replica sets found, for that scenario

const many = () => groups().length > 1;
const resolvedPlan = () => state.resolved?.scenario.plan ?? null;

/** The mode on show: 'none' (one group, even split), 'stages' or 'replicas'. */
export function mode() {
  const p = state.scenario.plan ?? {};
  if (p.stages) return 'stages';
  if (p.replicas) return 'replicas';
  if (!many()) return 'none';
  const r = resolvedPlan();
  if (r) lastMode = r.replicas ? 'replicas' : 'stages';
  return lastMode;
}

/** The rows of a map: the scenario's (explicit), else the engine's placement. */
function rowsOf(kind) {
  const mine = state.scenario.plan?.[kind];
  if (mine) return { rows: mine, explicit: true };
  return { rows: resolvedPlan()?.[kind] ?? [], explicit: false };
}

/** The engine's value for row `i` of a map, when the answer on show is for rows like these. */
function engineRow(kind, i, count) {
  const list = resolvedPlan()?.[kind];
  return list && list.length === count ? list[i] : undefined;
}

/** Writes the engine's placement into the scenario (all "auto"), so that one row can change. */
function own(kind) {
  const p = plan();
  if (p[kind]) return p[kind];
  const engineRows = resolvedPlan()?.[kind] ?? [];
  p[kind] = kind === 'stages' ? engineRows.map((r) => ({ group: r.group, layers: 'auto' }))
    : engineRows.map((r) => ({ group: r.group, count: r.count, micro_batches: 'auto' }));
  return p[kind];
}

// Plan keys that shape the split on one group without rows: the layers of the first and last
// stage (a row per stage gives every stage's layers instead), and the embedding or the loss
// counted as a layer (which "auto" rows do not balance: the engine asks for the layers).
const FIRST_LAST = ['first_stage_layers', 'last_stage_layers'];
const AS_LAYERS = ['embedding_in_split', 'loss_in_split'];

/**
 * One group, layers per stage: a row per stage (the engine's stages when it has them), all
 * "auto"; the engine's layers as numbers when the plan split the layers by the first and last
 * stage's, or counts the embedding or the loss as a layer. The first and last stage's layers are
 * put aside (an even split again brings them back).
 */
function evenStages(pp) {
  const p = plan();
  const engineStages = resolvedPlan()?.stages;
  const numbers = [...FIRST_LAST, ...AS_LAYERS].some((k) => p[k] !== undefined && p[k] !== false);
  const kept = Object.fromEntries(FIRST_LAST.filter((k) => p[k] !== undefined).map((k) => [k, p[k]]));
  if (Object.keys(kept).length) state.stash.firstLast = kept;
  for (const k of FIRST_LAST) delete p[k];
  if (engineStages && engineStages.length === pp)
    return engineStages.map((r) => ({ group: r.group, layers: numbers ? r.layers : 'auto' }));
  return Array.from({ length: pp }, () => ({ group: 0, layers: 'auto' }));
}

/** PP changed: stages placed by hand no longer match it; the engine places them again. */
export function ppChanged(pp) {
  const p = plan();
  if (!p.stages) return;
  if (many()) delete p.stages;
  else if (Number.isInteger(pp) && pp >= 1 && pp <= MAX_ROWS) p.stages = Array.from({ length: pp }, () => ({ group: 0, layers: 'auto' }));
}

/** Switches the mode; each mode keeps its rows for a switch back. */
function setMode(value) {
  const p = plan();
  state.lastChanged = value === 'replicas' ? 'plan.replicas' : 'plan.stages';
  if (value !== 'stages' && p.stages) state.stash.stages = p.stages;
  if (value !== 'replicas' && p.replicas) state.stash.replicas = p.replicas;
  if (value !== 'stages') delete p.stages;
  if (value !== 'replicas') delete p.replicas;
  if (value === 'none' && state.stash.firstLast) {
    for (const [k, v] of Object.entries(state.stash.firstLast)) p[k] ??= v;
    state.stash.firstLast = undefined;
  }
  if (value === 'stages' && !p.stages) {
    const pp = resolvedPlan()?.pp ?? p.pp ?? plainDefault('plan.pp');
    const kept = state.stash.stages;
    const firstLast = FIRST_LAST.some((k) => p[k] !== undefined);
    if (kept && (many() || (kept.length === pp && !firstLast))) p.stages = kept;
    else if (!many() && Number.isInteger(pp)) p.stages = evenStages(pp);
    else if (many()) stagesOnGroups(pp);
  }
  if (value === 'replicas' && !p.replicas) {
    if (state.stash.replicas) p.replicas = state.stash.replicas;
    // A starting point to edit: one replica on each group (the engine says what does not add up).
    else if (!resolvedPlan()?.replicas) p.replicas = groups().map((_, i) => ({ group: i, count: 1, micro_batches: 'auto' }));
  }
  note = null;
}

/**
 * Several groups, the pipeline split across them: the engine places the stages, unless it would
 * place replica sets for this plan (PP 1); then a row per stage, so that the choice holds and the
 * engine says what does not fit. Asks the engine (resolve()), then re-renders.
 */
async function stagesOnGroups(pp) {
  const probe = structuredClone(state.scenario);
  const r = await engine.resolve(JSON.stringify(probe));
  const p = plan();
  if (r.scenario?.plan.stages || p.stages || p.replicas || JSON.stringify(state.scenario) !== JSON.stringify(probe)) return;
  if (Number.isInteger(pp)) p.stages = Array.from({ length: pp }, () => ({ group: 0, layers: 'auto' }));
  notify();
}

function groupSelect(id, label) {
  return h('select', { id: `f-${id}`, name: id, 'aria-label': label });
}

function autoCheck(id, label) {
  return h('label', { class: 'inline-check' },
    h('input', { type: 'checkbox', id: `f-${id}`, name: id, 'aria-label': label }), 'auto');
}

function mapCell(path, id, control, extra) {
  return h('div', { class: 'field', 'data-path': path },
    h('div', { class: 'control' }, control, extra), errorLines(id));
}

/** A number box of row `i` bound to `key` of the row ("layers", "count", "micro_batches"). */
function bindRowNumber(el, kind, i, key) {
  return on(el, () => {
    const path = `plan.${kind}[${i}].${key}`;
    const r = readNumber(el);
    markLocal(el, path, r.message);
    if (r.message) return;
    own(kind)[i][key] = r.value;
    state.lastChanged = path;
  });
}

/** The "auto" box of row `i`: unticked, the field starts from the engine's value. */
function bindAuto(box, kind, i, key, input) {
  return on(box, () => {
    const path = `plan.${kind}[${i}].${key}`;
    const row = own(kind)[i];
    state.lastChanged = path;
    markLocal(input, path, null);
    if (box.checked) {
      row[key] = 'auto';
      return;
    }
    const v = engineRow(kind, i, own(kind).length)?.[key];
    if (typeof v === 'number') row[key] = v;
    else markLocal(input, path, 'Enter a value.');
  });
}

function bindGroup(select, kind, i) {
  return on(select, () => {
    own(kind)[i].group = Number(select.value);
    state.lastChanged = `plan.${kind}[${i}].group`;
  });
}

function stageRow(i) {
  const layers = numberInput(`st${i}-layers`);
  layers.setAttribute('aria-label', `Layers of stage ${i}`);
  const auto = autoCheck(`st${i}-auto`, `Balance the layers of stage ${i} automatically`);
  bindRowNumber(layers, 'stages', i, 'layers');
  bindAuto($('input', auto), 'stages', i, 'layers', layers);
  return h('div', { class: 'map-row stage-grid', 'data-stage': i },
    h('span', { class: 'map-name' }, h('span', { class: 'swatch' }), `Stage ${i}`),
    mapCell(`plan.stages[${i}].group`, `st${i}-group`, bindGroup(groupSelect(`st${i}-group`, `Group of stage ${i}`), 'stages', i)),
    mapCell(`plan.stages[${i}].layers`, `st${i}-layers`, layers, auto));
}

function replicaRow(i) {
  const count = bindRowNumber(numberInput(`rs${i}-count`), 'replicas', i, 'count');
  const mb = numberInput(`rs${i}-mb`);
  bindRowNumber(mb, 'replicas', i, 'micro_batches');
  const mbField = field(`plan.replicas[${i}].micro_batches`, `rs${i}-mb`, 'Micro-batches', null, mb, { cls: 'rs-mb' });
  mb.setAttribute('aria-label', `Micro-batches per replica of set ${i}`);
  count.setAttribute('aria-label', `Replicas in set ${i}`);
  const auto = autoCheck(`rs${i}-auto`, `Share micro-batches to replica set ${i} automatically`);
  bindAuto($('input', auto), 'replicas', i, 'micro_batches', mb);
  $('.control', mbField).append(auto);
  return h('div', { class: 'map-row replica-grid', 'data-replica': i },
    h('span', { class: 'map-name' }, h('span', { class: 'swatch' }), `Set ${i}`),
    mapCell(`plan.replicas[${i}].group`, `rs${i}-group`, bindGroup(groupSelect(`rs${i}-group`, `Group of replica set ${i}`), 'replicas', i)),
    onClick(h('button', { type: 'button', class: 'link remove-set', 'aria-label': `Remove replica set ${i}` }, 'Remove'),
      () => removeReplicaSet(i), () => $('#add-replica-set').focus()),
    field(`plan.replicas[${i}].count`, `rs${i}-count`, 'Replicas', null, count, { cls: 'rs-count' }),
    mbField);
}

function addReplicaSet() {
  const list = own('replicas');
  list.push({ group: Math.min(groups().length - 1, list.length), count: 1, micro_batches: 'auto' });
  state.lastChanged = 'plan.replicas';
}

function removeReplicaSet(i) {
  const list = own('replicas');
  if (list.length < 2) return;
  list.splice(i, 1);
  state.lastChanged = 'plan.replicas';
}

/** Replica sets placed by the engine, when it places them for this plan (else a note says so). */
async function placeReplicas() {
  const probe = structuredClone(state.scenario);
  delete probe.plan.replicas;
  delete probe.plan.stages;
  const r = await engine.resolve(JSON.stringify(probe));
  if (r.scenario?.plan.replicas) {
    delete plan().replicas;
    note = null;
  } else {
    note = { text: 'The engine does not place replica sets for this plan itself (it would split the pipeline across ' +
      'the groups instead): set the counts by hand.', for: JSON.stringify(state.scenario) };
  }
  state.lastChanged = 'plan.replicas';
  notify();
}

/** Builds the placement controls (#placement-fields, and the uneven split among the plan's options). */
export function build() {
  const choice = (value, text) => h('label', { class: 'choice', id: `layout-${value}` },
    on(h('input', { type: 'radio', name: 'layout-mode', value, id: `f-layout-${value}` }), (el) => { if (el.checked) setMode(value); }),
    h('span', null, text));
  fill($('#placement-fields'),
    h('div', { class: 'choices', role: 'radiogroup', 'aria-label': 'Where the work runs' },
      choice('none', 'Even split: PP stages of equal layers'),
      choice('stages', 'Split the pipeline across groups'),
      choice('replicas', 'Replicas on different groups')),
    h('p', { class: 'hint', id: 'layout-hint' }),
    h('div', { id: 'stage-map', class: 'field whole map', 'data-path': 'plan.stages', 'data-label': 'the stage map', hidden: true },
      h('div', { class: 'map-head stage-grid', 'aria-hidden': 'true' },
        h('span', null, 'Stage'), h('span', null, 'Group · GPU'), h('span', null, 'Layers')),
      h('div', { id: 'stage-rows', class: 'map-rows' }),
      errorLines('stages'),
      h('div', { class: 'map-tools' },
        onClick(h('button', { type: 'button', id: 'all-auto' }, 'Balance all layers'), () => {
          for (const st of own('stages')) st.layers = 'auto';
          state.lastChanged = 'plan.stages';
        }),
        onClick(h('button', { type: 'button', id: 'place-stages' }, 'Place by GPU count'), () => {
          delete plan().stages;
          state.lastChanged = 'plan.stages';
        }))),
    h('div', { id: 'replica-map', class: 'field whole map', 'data-path': 'plan.replicas', 'data-label': 'the replica sets', hidden: true },
      h('div', { id: 'replica-rows', class: 'map-rows' }),
      errorLines('replicas'),
      h('div', { class: 'map-tools' },
        onClick(h('button', { type: 'button', id: 'add-replica-set' }, '+ Add a replica set'), addReplicaSet,
          () => $(`#f-rs${(state.scenario.plan.replicas?.length ?? 1) - 1}-group`)?.focus()),
        h('button', { type: 'button', id: 'place-replicas', onclick: placeReplicas }, 'Place by GPU count'))));
  const uneven = on(h('input', { id: 'f-uneven', type: 'checkbox' }), (el) => setMode(el.checked ? 'stages' : 'none'));
  $('#split-grid').append(h('div', { class: 'field check wide', id: 'uneven-field' },
    h('div', { class: 'label-row' }, uneven,
      h('label', { for: 'f-uneven' }, 'Uneven split: layers per stage'), tip('stage_map', 'layers per stage'))));
}

/** Fills every group menu of the maps (when the groups or their names changed, or the rows were rebuilt). */
function refreshGroupOptions(force) {
  const info = groupInfo();
  const key = info.map((g) => g.gpu.split(' ')[0]).join('\n');
  if (!force && key === optionsKey) return;
  optionsKey = key;
  for (const s of $$('#stage-rows select, #replica-rows select')) {
    const value = s.value;
    fill(s, info.map((g) => h('option', { value: g.index }, `${g.index} · ${g.gpu.split(' ')[0]}`)));
    if (value !== '' && Number(value) < info.length) s.value = value;
  }
}

// The two maps: their rows' container, the row builder, the id prefix of a row's controls and the
// key its "auto" box stands for (the number box f-<prefix><i>-<field>).
const MAPS = {
  stages: { rows: '#stage-rows', build: (i) => stageRow(i), prefix: 'st', key: 'layers', field: 'layers' },
  replicas: { rows: '#replica-rows', build: (i) => replicaRow(i), prefix: 'rs', key: 'micro_batches', field: 'mb' },
};

/** Shows one map: the scenario's rows, or the engine's placement in "auto". */
function renderMap(kind) {
  const m = MAPS[kind];
  const { rows, explicit } = rowsOf(kind);
  const n = rows.length <= MAX_ROWS ? rows.length : 0;
  const key = `${kind} ${n}`;
  const rebuild = key !== rowsKey;
  if (rebuild) {
    for (const other of Object.values(MAPS)) fill($(other.rows));
    fill($(m.rows), Array.from({ length: n }, (_, i) => m.build(i)));
    rowsKey = key;
  }
  refreshGroupOptions(rebuild);
  for (let i = 0; i < n; i++) {
    const row = rows[i];
    const engineValue = engineRow(kind, i, n);
    const id = (what) => $(`#f-${m.prefix}${i}-${what}`);
    const auto = !explicit || row[m.key] === 'auto' || row[m.key] === undefined;
    const input = id(m.field);
    const local = state.local.has(input);
    put(id('group'), row.group ?? engineValue?.group ?? 0);
    const count = kind === 'replicas' ? id('count') : null;
    if (count && !state.local.has(count)) put(count, row.count ?? engineValue?.count);
    put(id('auto'), auto && !local);
    if (input.readOnly !== (auto && !local)) input.readOnly = auto && !local;
    if (!local) put(input, auto ? engineValue?.[m.key] : row[m.key]);
  }
}

/** Shows the mode and the maps: the scenario's rows, or the engine's placement. */
export function render() {
  const m = mode();
  const isMany = many();
  if (m !== 'none') renderMap(m);
  else if (rowsKey) {
    fill($('#stage-rows'));
    fill($('#replica-rows'));
    rowsKey = '';
  }
  for (const row of $$('#stage-rows .map-row, #replica-rows .map-row')) {
    const color = groupColor(Number($('select', row).value));
    const sw = $('.swatch', row);
    if (sw.style.background !== color) sw.style.background = color;
  }
  show($('#placement-fieldset'), m !== 'none');
  show($('#stage-map'), m === 'stages');
  show($('#replica-map'), m === 'replicas');
  show($('#layout-none'), !isMany);
  show($('#layout-replicas'), isMany || m === 'replicas');
  show($('#uneven-field'), !isMany);
  show($('#place-stages'), isMany);
  put($('#f-uneven'), m !== 'none');
  const radio = $(`#f-layout-${m}`);
  if (radio && !radio.checked) radio.checked = true;
  setText($('#layout-stages span'), isMany ? 'Split the pipeline across groups' : 'Layers per stage (uneven split)');
  const placed = !rowsOf(m === 'replicas' ? 'replicas' : 'stages').explicit;
  if (note && note.for !== JSON.stringify(state.scenario)) note = null;
  setText($('#layout-hint'), note?.text || (m === 'stages'
    ? (isMany ? 'Each pipeline stage runs on one group; a stage boundary between groups crosses the link between the ' +
      'groups. “auto” lets the engine balance the layers by stage speed, within memory.'
      : '“auto” lets the engine balance the layers by stage speed, within each stage\'s memory.')
    : m === 'replicas'
      ? 'Each replica is a whole pipeline on one group. “auto” lets the engine share the micro-batches by replica ' +
        'speed; the gradient ring crosses the link between the groups.'
      : '') + (m !== 'none' && placed && !state.resolved ? ' The engine places them once it accepts the plan.' : ''));
}

/** Forgets the layouts put aside and the mode shown (a new scenario is on show). */
export function forget() {
  lastMode = 'stages';
  note = null;
}
