// The model: a preset (searchable list) or a custom shape. Custom fields are built from the
// schema's model keys; a key that is an object of keys of its own (attention, mixture of experts)
// is a disclosure of its keys, collapsed while the model leaves it out (a dense model), so that a
// dense custom model becomes a mixture of experts by filling in its experts. A custom model starts
// as a copy of the preset on show, as the engine resolved it (every key filled in).
import { $, $$, fill, h } from '../ui/dom.js';
import { applies, choiceLabel, key, keysFor, keysOf, plainDefault, required, rule } from '../scenario/schema.js';
import { field, isNumberBox, keyField, put, radios, readNumber, setText, show, valueOf } from './fields.js';
import { labelOf } from '../ui/plain.js';
import { on, onClick } from './bind.js';
import { edit, getIn, markLocal, setIn, state } from './state.js';

let presets;
const byId = (list, id) => list.find((x) => x.id === id);
const customKeys = () => keysFor('model').filter((k) => k.object === 'model' && k.type !== 'object');
// The model's keys that hold keys of their own: a disclosure each ("model.attention", "model.moe").
const subObjects = () => keysFor('model').filter((k) => k.object === 'model' && k.type === 'object' && keysOf(k.path).length);
const isPreset = () => typeof state.scenario?.model === 'string';
// f-m-layers, f-m-moe-experts: one id per key of the model and its objects.
const idOf = (k) => `m-${k.path.slice('model.'.length).replaceAll('.', '-')}`;
let shownModel = null; // the custom model whose disclosures were last opened or closed to fit it

/** The model on show as an object: the custom one, or the preset's (null for a preset not known). */
export function modelObject() {
  const m = state.scenario?.model;
  return typeof m === 'string' ? byId(presets?.models ?? [], m) ?? null : m ?? null;
}

/**
 * "80 layers · hidden 8,192 · 64 heads (8 KV) · FFN 28,672 SwiGLU · vocabulary 128,256 · trained at
 * 8,192 tokens", with "· 128 experts of FFN 768, 8 per token" for a mixture of experts.
 */
// One formatter: toLocaleString builds one for each number (the card is written at every render).
const grouped = new Intl.NumberFormat('en-US');

function modelCard(m) {
  if (!m) return '';
  const n = (x) => grouped.format(x);
  const ffn = choiceLabel(m.ffn_type);
  return `${m.layers} layers · hidden ${n(m.hidden)} · ${m.heads} heads` +
    `${m.kv_heads && m.kv_heads !== m.heads ? ` (${m.kv_heads} KV)` : ''} · FFN ${n(m.ffn_hidden)} ${ffn}` +
    `${m.moe ? ` · ${n(m.moe.experts)} experts of FFN ${n(m.moe.ffn_hidden)}, ${m.moe.top_k} per token` +
      `${m.moe.shared_experts ? ` + ${m.moe.shared_experts} shared` : ''}` : ''}` +
    `${m.attention?.type === 'mla' ? ' · MLA attention' : ''}` +
    ` · vocabulary ${n(m.vocab)} · trained at ${n(m.seq_len)} tokens`;
}

function fillModelList(query) {
  const select = $('#f-model');
  const current = isPreset() ? state.scenario.model : '';
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const match = (m) => words.every((w) => `${m.name} ${m.id}`.toLowerCase().includes(w));
  const shown = presets.models.filter(match);
  // The model on show stays selectable, but apart: it is not one of the matches.
  const onShow = current && !shown.some((m) => m.id === current) ? byId(presets.models, current) : null;
  fill(select, shown.map((m) => h('option', { value: m.id }, m.name)),
    onShow ? h('optgroup', { label: 'On show' }, h('option', { value: onShow.id }, onShow.name)) : null);
  if (current) select.value = current;
  setText($('#model-count'), words.length
    ? `${shown.filter(match).length} of ${presets.models.length} models match`
    : `${presets.models.length} models`);
}

/** A custom model that estimates like the preset on show: the keys the page shows and every required one. */
function copyOfPreset() {
  const id = state.scenario.model;
  const resolved = state.resolved?.model;
  const from = resolved && resolved.id === id ? resolved : byId(presets.models, id) ?? presets.models[0];
  const out = {};
  for (const k of keysOf('model')) {
    if ((k.control !== 'none' || required(k.path)) && from[k.name] !== undefined) out[k.name] = from[k.name];
  }
  // An object's keys the engine resolved to null (no capacity factor: dropless) are left out.
  for (const o of subObjects()) {
    if (out[o.name]) out[o.name] = Object.fromEntries(Object.entries(out[o.name]).filter(([, v]) => v !== null));
  }
  out.name = `${from.name} (custom)`;
  return out;
}

function setMode(mode) {
  if (mode === 'custom' && isPreset()) {
    state.stash.model = state.scenario.model;
    edit('model', copyOfPreset());
  } else if (mode === 'preset' && !isPreset()) {
    edit('model', state.stash.model ?? presets.models[0].id);
  }
}

/** Builds the model's fields into #model-fields. */
export function build(thePresets) {
  presets = thePresets;
  presets.models.sort((a, b) => a.name.localeCompare(b.name, 'en', { numeric: true }));
  const search = h('input', {
    id: 'f-model-search', type: 'search', placeholder: 'e.g. llama 70b', autocomplete: 'off',
    'data-local': 'true', 'aria-controls': 'f-model', 'aria-describedby': 'model-count',
  });
  search.addEventListener('input', () => fillModelList(search.value));
  // From the search box, the keyboard chooses among the matches (issue 37 item 12): ArrowDown goes
  // to the list on its first match (the model on show, listed apart, is not one), Enter takes it.
  // In the list the arrows choose, as in any list box.
  search.addEventListener('keydown', (e) => {
    if (e.key !== 'ArrowDown' && e.key !== 'Enter') return;
    e.preventDefault();
    const list = $('#f-model');
    const first = list.querySelector(':scope > option');
    if (e.key === 'ArrowDown') list.focus();
    if (first && (e.key === 'Enter' || list.selectedOptions[0]?.parentElement !== list)) {
      list.value = first.value;
      list.dispatchEvent(new Event('change', { bubbles: true }));
    }
  });
  const select = on(h('select', { id: 'f-model', name: 'model', size: 7 }), (el) => {
    const before = state.scenario.model;
    if (!el.value || el.value === before) return; // "input" then "change": one choice
    const plan = structuredClone(state.scenario.plan);
    edit('model', el.value);
    const taken = takeRecipe(byId(presets.models, el.value));
    noteRecipe(taken, plan, before);
    noteCarried(before, el.value, !taken, taken ? [] : dropLayerSplit(before, el.value));
    fillModelList($('#f-model-search').value); // the model on show is now this one
  });
  const custom = customKeys().sort((a, b) => rank(a) - rank(b)).map((k) => {
    const f = keyField(k, k.path, idOf(k), { cls: k.type === 'text' ? 'wide' : '' });
    const el = $(`#f-${idOf(k)}`, f);
    defaultPlaceholder(k, el);
    on(el, () => {
      if (isNumberBox(el)) {
        const r = readNumber(el);
        markLocal(el, k.path, r.message);
        if (!r.message) edit(k.path, r.value);
      } else {
        const v = valueOf(el);
        edit(k.path, k.type === 'text' && v.trim() === '' ? undefined : k.type === 'text' ? v.trim() : v);
      }
    });
    return f;
  });
  const modes = radios('model-mode', 'Model source', [['preset', 'Preset'], ['custom', 'Custom']]);
  for (const r of modes.querySelectorAll('input')) on(r, (el) => { if (el.checked) setMode(el.value); });
  fill($('#model-fields'),
    modes,
    h('div', { id: 'model-preset', class: 'panel' },
      h('div', { class: 'field' },
        h('div', { class: 'label-row' }, h('label', { for: 'f-model-search' }, 'Search models')),
        h('div', { class: 'control' }, search),
        h('p', { class: 'hint', id: 'model-count', 'aria-live': 'polite' })),
      field('model', 'model', 'Model preset', { doc: key('model')?.doc }, select, { hint: '' }),
      h('p', { class: 'hint carried', id: 'model-carried', role: 'status', hidden: true },
        h('span', { id: 'model-carried-text' }), ' ',
        onClick(h('button', { type: 'button', class: 'link', id: 'model-carried-use' }), useModelSeqLen)),
      h('p', { class: 'hint carried', id: 'model-recipe', role: 'status', hidden: true },
        h('span', { id: 'model-recipe-text' }), ' ',
        onClick(h('button', { type: 'button', class: 'link', id: 'model-recipe-undo' }, 'Keep the previous plan'), keepPreviousPlan))),
    h('div', { id: 'model-custom', class: 'panel', hidden: true },
      h('div', { class: 'grid' }, custom), subObjects().map(disclosure)));
  $('#f-model-hint').id = 'model-card';
  select.setAttribute('aria-describedby', 'model-card');
  fillModelList('');
}

/**
 * The disclosure of a model key that is an object (`o`): a field per key of it. An empty number
 * box leaves its key out (the engine's default, or its "required" when the object needs it), and
 * the object goes when its last key does (a mixture of experts cleared is a dense model again).
 */
function disclosure(o) {
  // Menus first: the kind (attention's type) that decides which of the numbers apply.
  const fields = keysOf(o.path).sort((a, b) => (a.type === 'choice' ? -1 : rank(a)) - (b.type === 'choice' ? -1 : rank(b))).map((k) => {
    const f = keyField(k, k.path, idOf(k));
    const el = $(`#f-${idOf(k)}`, f);
    defaultPlaceholder(k, el);
    on(el, () => {
      let v;
      if (isNumberBox(el)) {
        const r = readNumber(el, { optional: true });
        markLocal(el, k.path, r.message);
        if (r.message) return;
        v = r.value;
      } else {
        v = valueOf(el);
      }
      edit(k.path, v);
      const object = getIn(state.scenario, o.path);
      if (object && Object.keys(object).length === 0) setIn(state.scenario, o.path, undefined);
    });
    return f;
  });
  return h('details', { class: 'sub-object', 'data-object': o.path },
    h('summary', null, o.label || o.name, h('span', { class: 'summary-note' })),
    h('div', { class: 'grid' }, fields));
}

/** An empty number box of a key with a plain default shows it, greyed (the engine's value). */
function defaultPlaceholder(k, el) {
  if (isNumberBox(el) && plainDefault(k.path) !== undefined) el.placeholder = String(plainDefault(k.path));
}

/**
 * What a disclosure's summary says of its object: its required keys (or, with none, its menus) as
 * set, or, left out, the engine's default ("grouped-query attention over kv_heads") or the keys to
 * fill in to add it ("none; fill in Experts, Top-k, Expert FFN size to add it").
 */
function objectNote(o, value) {
  const keys = keysOf(o.path);
  if (value) {
    const main = keys.filter((k) => required(k.path));
    const s = { ...state.scenario, model: modelObject() };
    const said = (main.length ? main : keys.filter((k) => k.type === 'choice' && applies(k, s)))
      .map((k) => [k, value[k.name] ?? plainDefault(k.path)]).filter(([, v]) => v !== undefined && v !== null)
      .map(([k, v]) => `${k.label || k.name} ${k.type === 'choice' ? choiceLabel(v) : v}`);
    return said.length ? ` · ${said.join(', ')}` : '';
  }
  const needed = keys.filter((k) => required(k.path)).map((k) => k.label || k.name);
  if (needed.length) return ` · none; fill in ${needed.join(', ')} to add it`;
  return rule(o.path) ? ` · ${rule(o.path).replace(/`/g, '')}` : ' · none';
}

/** Opens the disclosure of an object the engine has an error about (its field must be seen). */
export function reveal(errors) {
  for (const d of $$('#model-custom details[data-object]')) {
    if (!d.open && errors.some((e) => e.path?.startsWith(`${d.dataset.object}.`))) d.open = true;
  }
}

// Text first (the name, across the grid), then numbers, menus, checkboxes.
const rank = (k) => ({ text: 0, integer: 1, number: 1, choice: 2, boolean: 3 }[k.type] ?? 4);

/** Shows the scenario's model (and, for a custom one, the engine's values of the keys it leaves out). */
export function render() {
  const preset = isPreset();
  if (carriedFor && state.scenario.model !== carriedFor) {
    carriedFor = null;
    show($('#model-carried'), false);
  }
  if (recipeFor && state.scenario.model !== recipeFor.model) {
    recipeFor = null;
    show($('#model-recipe'), false);
  }
  $('#f-model-mode-preset').checked = preset;
  $('#f-model-mode-custom').checked = !preset;
  show($('#model-preset'), preset);
  show($('#model-custom'), !preset);
  if (preset) {
    const select = $('#f-model');
    if (select.value !== state.scenario.model) {
      if (![...select.options].some((o) => o.value === state.scenario.model)) {
        $('#f-model-search').value = '';
        fillModelList('');
      }
      select.value = state.scenario.model;
    }
    setText($('#model-card'), modelCard(byId(presets.models, state.scenario.model)));
    return;
  }
  const m = state.scenario.model;
  const resolved = state.resolved?.model;
  // A custom model newly on show (from a preset, a link, a file): its objects open if it has them.
  const fresh = m !== shownModel;
  shownModel = m;
  for (const o of subObjects()) {
    const d = $(`#model-custom details[data-object="${o.path}"]`);
    if (fresh && d.open !== (m[o.name] !== undefined)) d.open = m[o.name] !== undefined;
    setText($('.summary-note', d), objectNote(o, m[o.name]));
    for (const k of keysOf(o.path)) {
      const el = $(`#f-${idOf(k)}`);
      // A number left out shows the engine's value, or none (its placeholder is the default); a
      // menu cannot show none: the default.
      const v = m[o.name]?.[k.name] ?? resolved?.[o.name]?.[k.name];
      // A list (the MoE layers as Megatron's --moe-layer-freq lists them, one 0/1 per layer, from an
      // import or a link) a number box cannot show: its count says it is there; a number typed
      // replaces it.
      const list = Array.isArray(v);
      if (list) el.placeholder = `list: ${v.filter(Boolean).length} of ${v.length}`;
      else if (isNumberBox(el) && el.placeholder.startsWith('list')) {
        el.placeholder = '';
        defaultPlaceholder(k, el);
      }
      if (!state.local.has(el)) put(el, list ? '' : v ?? (isNumberBox(el) ? '' : plainDefault(k.path)));
    }
  }
  for (const k of customKeys()) {
    const el = $(`#f-${idOf(k)}`);
    if (state.local.has(el)) continue;
    if (k.type === 'text') {
      // Left out, the engine names it: its name is the placeholder (the box stays empty to type in).
      put(el, m[k.name] ?? '');
      if (el.placeholder !== (resolved?.[k.name] ?? '')) el.placeholder = resolved?.[k.name] ?? '';
    } else {
      put(el, m[k.name] ?? resolved?.[k.name]);
    }
  }
}

/**
 * A new preset keeps the plan, the global batch and a sequence length the user set: say so beside
 * the menu (a 70B run silently at the 8B example's 8,192 tokens is a surprise), with a button to
 * take the new model's own training length.
 */
let carriedFor = null; // the model the note is about (another model on show hides it)

/**
 * A plan's split of the layers (a pipeline layout, the first and last stages' layer counts) is
 * written for its model's layers: a model of other layers keeps the plan but not that split, which
 * it returns the keys of. (Picked after DeepSeek-V3's recipe, GPT-3 175B's every estimate was an
 * error about DeepSeek-V3's layout "Et|(tt|)*30mL", a key the user never typed.)
 */
const LAYER_SPLIT = ['pipeline_layout', 'first_stage_layers', 'last_stage_layers'];
function dropLayerSplit(before, after) {
  const layers = (m) => {
    const x = typeof m === 'string' ? byId(presets.models, m) : m;
    return x && typeof x === 'object' ? `${x.layers} ${x.mtp_layers ?? 0}` : null;
  };
  if (layers(before) === layers(after)) return [];
  const dropped = LAYER_SPLIT.filter((k) => state.scenario.plan?.[k] !== undefined);
  for (const k of dropped) edit(`plan.${k}`, undefined);
  return dropped;
}

function noteCarried(before, after, planKept, dropped = []) {
  const from = typeof before === 'string' ? byId(presets.models, before) : null;
  const to = byId(presets.models, after);
  const note = $('#model-carried');
  carriedFor = to && from && from.id !== to.id ? to.id : null;
  if (!carriedFor) {
    show(note, false);
    return;
  }
  const n = (x) => Number(x).toLocaleString('en-US');
  const seq = state.scenario.seq_len;
  const kept = [seq !== undefined ? `sequence length ${n(seq)}` : null,
    state.scenario.plan?.global_batch !== undefined ? `global batch ${n(state.scenario.plan.global_batch)}` : null,
    planKept && `the plan${dropped.length ? ` but its ${dropped.map((k) => labelOf(`plan.${k}`).toLowerCase()).join(' and ')} (for ${from.name}'s layers)` : ''}`].filter(Boolean);
  const last = kept.pop();
  setText($('#model-carried-text'), `Kept from ${from.name}: ${kept.length ? `${kept.join(', ')} and ` : ''}${last}` +
    `${seq !== undefined && seq !== to.seq_len ? ` (${to.name} was trained at ${n(to.seq_len)})` : ''}.`);
  const use = $('#model-carried-use');
  show(use, seq !== undefined && seq !== to.seq_len);
  setText(use, `Use ${n(to.seq_len)} tokens`);
  show(note, true);
}

function useModelSeqLen() {
  const to = byId(presets.models, state.scenario.model);
  if (to) edit('seq_len', to.seq_len);
  show($('#model-carried-use'), false);
  setText($('#model-carried-text'), `Sequence length set to ${to.name}'s ${to.seq_len.toLocaleString('en-US')}.`);
}

/** The preset's training context ("the model was trained at 8,192"), for the sequence length's hint. */
export function presetSeqLen() {
  return isPreset() ? byId(presets.models, state.scenario.model)?.seq_len : undefined;
}

/**
 * A mixture-of-experts model's first number with Megatron-Core's defaults (the alltoall dispatcher,
 * no expert parallelism) can be twice what its published recipe runs at: a preset with a recipe
 * (its `recipe`: a measured run, presets/models/) brings that run's parallel layout and MoE keys
 * when it is picked, fitted to the cluster on show (the largest TP and EP dividing its GPUs; the
 * pipeline only where it divides them too), and says so with a way back.
 */
const LAYOUT = ['pp', 'vpp', 'pipeline_layout', 'embedding_in_split', 'loss_in_split'];
const RECIPE_KEYS = ['tp', ...LAYOUT, 'ep', 'etp', 'moe_dispatcher', 'moe_overlap', 'recompute'];
let recipeFor = null; // {model, plan}: the model whose recipe is on show and the plan it replaced

/** The largest divisor of `n` that divides `m` too. */
const fitting = (n, m) => { let d = n; while (d > 1 && (n % d || m % d)) d -= 1; return d; };

/** Sets the keys of `model`'s recipe that fit the cluster; returns {recipe, keys} or null. */
function takeRecipe(model) {
  const recipe = model?.recipe;
  if (!recipe) return null;
  const want = {};
  for (const k of RECIPE_KEYS) if (k in recipe.plan) want[k] = recipe.plan[k];
  // The GPUs as the engine counted them, else a node preset's (while the plan on show has errors);
  // none for groups of nodes, whose stages and replicas are the user's: then only the MoE keys.
  const c = state.scenario.cluster ?? {};
  const gpus = c.groups ? 0 : state.resolved?.gpus ?? (byId(presets.nodes, c.node)?.gpus_per_node ?? 0) * c.nodes;
  const keys = gpus ? RECIPE_KEYS : RECIPE_KEYS.slice(LAYOUT.length + 2);
  if (gpus) {
    want.tp = fitting(want.tp ?? 1, gpus);
    if (gpus % (want.tp * (want.pp ?? 1))) for (const k of LAYOUT) delete want[k]; // one stage
    want.ep = fitting(want.ep ?? 1, gpus / (want.pp ?? 1) / (want.etp ?? 1));
    edit('plan.dp', undefined); // what the GPUs leave
  }
  // The recipe's keys as it has them, the others of its kind at their defaults (no layout of
  // the previous plan left on a recipe of one stage).
  for (const k of keys) edit(`plan.${k}`, want[k]);
  for (const k of RECIPE_KEYS) if (!keys.includes(k)) delete want[k];
  state.lastChanged = 'model';
  return { recipe, keys: want };
}

function noteRecipe(taken, previous, from) {
  recipeFor = taken && { model: state.scenario.model, plan: previous, from };
  show($('#model-recipe'), !!taken);
  show($('#model-recipe-undo'), !!taken);
  if (!taken) return;
  const k = taken.keys;
  setText($('#model-recipe-text'), `Plan from ${taken.recipe.name}, the published run of this model: ` +
    [['TP', k.tp], ['PP', k.pp], ['VPP', k.vpp > 1 && k.vpp], ['EP', k.ep]].filter(([, v]) => v).map((x) => x.join(' '))
      .concat(k.moe_dispatcher ? `${k.moe_dispatcher} dispatcher` : [], k.recompute ? `recompute ${k.recompute}` : []).join(', ') + '.');
}

function keepPreviousPlan() {
  if (!recipeFor) return;
  state.scenario.plan = recipeFor.plan;
  // (Its split of the layers, if it has one, was the previous model's: dropLayerSplit.)
  const dropped = dropLayerSplit(recipeFor.from, state.scenario.model);
  state.lastChanged = 'plan';
  show($('#model-recipe-undo'), false);
  const from = typeof recipeFor.from === 'string' ? byId(presets.models, recipeFor.from)?.name : null;
  setText($('#model-recipe-text'), `The previous plan is back${dropped.length
    ? ` but its ${dropped.map((k) => labelOf(`plan.${k}`).toLowerCase()).join(' and ')} (for ${from ?? 'the previous model'}'s layers)` : ''}.`);
}
