// The plan: the training software first (plan.framework, a menu of the profiles by name), then
// every key of the schema the page shows under "Parallelism and batch" (control "plan") or in the
// "Advanced" disclosure (control "advanced"), built from the schema: a new plan key in the engine
// appears with no change here. A key the scenario leaves out shows the engine's value (resolve()):
// DP derived from the GPUs, the sequence length of the model, and each flag of the training
// software (sequence parallelism, the distributed optimizer, ZeRO, overlaps, ...) as its profile
// gives it, marked "from <profile>" until the plan sets it, with a button back to the profile's
// value and the profile's source in its tooltip (presets().frameworks). While the engine refuses
// the plan, derived fields show no number and flags show the profile's own value.
import { $, fill, h } from '../ui/dom.js';
import * as fw from '../scenario/frameworks.js';
import { choiceLabel, key, keysFor, options, plainDefault, rule } from '../scenario/schema.js';
import { on, onClick } from './bind.js';
import { isNumberBox, keyField, put, readNumber, selectInput, setText, show, valueOf } from './fields.js';
import { presetSeqLen } from './model.js';
import { ppChanged } from './placement.js';
import { edit, getIn, markLocal, plan, state } from './state.js';

// Numbers first (the plan's, then the scenario's sequence length), then menus, then checkboxes,
// then text (Megatron's pipeline layout, the rank order).
const TYPE_RANK = { integer: 0, number: 0, choice: 1, boolean: 2, text: 3 };
const OBJECT_RANK = { plan: 0, scenario: 1 };
const WITH_HINT = new Set(['plan.dp', 'plan.global_batch', 'seq_len']);
// The advanced keys that split the layers into stages; the others that are no flag of the
// training software (the memory headroom, the rank order) go under a heading of their own.
const SPLIT = new Set(['plan.first_stage_layers', 'plan.last_stage_layers', 'plan.embedding_in_split',
  'plan.loss_in_split', 'plan.pipeline_layout']);
const FRAMEWORK = 'plan.framework';
const shown = (control) => keysFor(control).filter((k) => TYPE_RANK[k.type] !== undefined && k.path !== FRAMEWORK)
  .sort((a, b) => TYPE_RANK[a.type] - TYPE_RANK[b.type] || (OBJECT_RANK[a.object] ?? 2) - (OBJECT_RANK[b.object] ?? 2));
let keys = [];
let flags = []; // the keys a training-software profile fills in, with their elements: {k, text, reset, tip}
let advancedPaths = new Set();
const idOf = (k) => k.name; // f-tp, f-seq_len, f-flash_attention: the page's ids as they always were
const integer = (x) => x.toLocaleString('en-US');
const isFlag = (k) => k.object === 'plan' && fw.isFlag(k.name);
// An advanced number the engine derives by a rule it does not write back (the layers of the first
// or last stage: "the even share"): empty leaves it to the engine, as its hint says.
const leftEmpty = (k) => k.default === null || (k.control === 'advanced' && !isFlag(k) && !!rule(k.path));

/** The training software on show: the plan's, else the engine's (its default). */
export function framework() {
  return getIn(state.scenario, FRAMEWORK) ?? state.resolved?.scenario.plan.framework ?? plainDefault(FRAMEWORK);
}

function bind(k, el) {
  on(el, () => {
    if (isNumberBox(el)) {
      const r = readNumber(el, { optional: leftEmpty(k) });
      markLocal(el, k.path, r.message);
      if (r.message) return;
      edit(k.path, r.empty ? undefined : r.value);
      if (k.path === 'plan.pp') ppChanged(r.value);
      return;
    }
    const v = valueOf(el);
    // Text left empty gives the key back to the engine (no layout; the default rank order).
    if (k.type === 'text') edit(k.path, v.trim() === '' ? undefined : v);
    else edit(k.path, k.type === 'integer' ? Number(v) : v);
  });
}

function dpDerive(dpInput) {
  const box = h('input', { id: 'f-dp-auto', type: 'checkbox', checked: true });
  on(box, (el) => {
    state.lastChanged = 'plan.dp';
    if (el.checked) {
      delete plan().dp;
      markLocal(dpInput, 'plan.dp', null);
    } else if (plan().dp === undefined) {
      const dp = state.resolved?.scenario.plan.dp;
      if (dp !== undefined) edit('plan.dp', dp);
      else markLocal(dpInput, 'plan.dp', 'Enter a value.');
    }
  });
  return h('label', { class: 'inline-check' }, box, 'derive');
}

/** Gives flag `k` back to the training software (the plan leaves it out). */
function useProfile(k) {
  delete plan()[k.name];
  markLocal($(`#f-${idOf(k)}`), k.path, null);
  state.lastChanged = k.path;
}

/** A flag's line under its control: "from Megatron-Core", or "set in the plan · use Megatron-Core's". */
function originLine(k) {
  const id = idOf(k);
  return h('p', { class: 'origin', id: `f-${id}-origin` },
    h('span', { class: 'origin-text' }),
    onClick(h('button', { type: 'button', class: 'link origin-reset', hidden: true }), () => useProfile(k),
      () => $(`#f-${id}`)?.focus()));
}

function frameworkField(k) {
  const values = options(k);
  const select = selectInput(idOf(k), values.map((v) => [String(v), fw.profile(v) ? fw.fullName(v) : choiceLabel(v)]));
  const f = keyField(k, k.path, idOf(k), { control: select, hint: '', cls: 'framework' });
  bind(k, select);
  return f;
}

/** Builds the plan's fields into #plan-fields (the advanced ones in a <details>, #advanced-grid and #split-grid). */
export function build(presets) {
  fw.setFrameworks(presets);
  const make = (k) => {
    const emptyRule = leftEmpty(k) && !options(k) && k.type !== 'boolean' ? rule(k.path) : '';
    const f = keyField(k, k.path, idOf(k), { hint: emptyRule ? `empty: ${emptyRule}` : WITH_HINT.has(k.path) ? '' : undefined });
    const el = $(`#f-${idOf(k)}`, f);
    bind(k, el);
    if (k.path === 'plan.dp') $('.control', f).append(dpDerive(el));
    if (isFlag(k)) {
      f.insertBefore(originLine(k), $(':scope > .error', f));
      el.setAttribute('aria-describedby', [el.getAttribute('aria-describedby'), `f-${idOf(k)}-origin`].filter(Boolean).join(' '));
    }
    return f;
  };
  const fwKey = keysFor('plan').find((k) => k.path === FRAMEWORK);
  const main = shown('plan');
  const advanced = shown('advanced');
  const advancedFlags = advanced.filter(isFlag);
  // The advanced keys that are no flag of the training software: how the layers split into
  // stages, the rest, and those that need an input (the schema's "needs": expert options need experts),
  // under that input's label ("Mixture of experts"), hidden with their fields (needs.js).
  const split = advanced.filter((k) => !isFlag(k) && !k.needs && SPLIT.has(k.path));
  const other = advanced.filter((k) => !isFlag(k) && !k.needs && !SPLIT.has(k.path));
  const needing = new Map();
  for (const k of advanced.filter((x) => !isFlag(x) && x.needs)) {
    const path = k.needs.split('=')[0];
    needing.set(path, [...(needing.get(path) ?? []), k]);
  }
  keys = [...(fwKey ? [fwKey] : []), ...main, ...advanced];
  advancedPaths = new Set(advanced.map((k) => k.path));
  const built = fill($('#plan-fields'),
    fwKey ? frameworkField(fwKey) : null,
    h('div', { class: 'grid' }, main.map(make)),
    h('details', { class: 'advanced', id: 'advanced' },
      h('summary', null, 'Advanced', h('span', { class: 'summary-note', id: 'advanced-note' })),
      h('div', { class: 'advanced-head' },
        h('p', { class: 'hint', id: 'flags-hint' }),
        onClick(h('button', { type: 'button', id: 'flags-reset', hidden: true }), () => {
          for (const { k } of flags) useProfile(k);
          state.lastChanged = FRAMEWORK;
        })),
      h('div', { class: 'grid', id: 'advanced-grid' }, advancedFlags.map(make)),
      [...needing].map(([path, ks]) => h('div', { 'data-needs-group': path },
        h('h3', { class: 'sub' }, key(path)?.label || path),
        h('div', { class: 'grid' }, ks.map(make)))),
      h('h3', { class: 'sub' }, 'Pipeline split'),
      h('div', { class: 'grid', id: 'split-grid' }, split.map(make)),
      other.length ? [h('h3', { class: 'sub' }, 'Memory and rank placement'),
        h('div', { class: 'grid', id: 'other-grid' }, other.map(make))] : null));
  flags = keys.filter(isFlag).map((k) => {
    const field = $(`[data-path="${k.path}"]`, built);
    const origin = $(`#f-${idOf(k)}-origin`, field);
    return { k, text: $('.origin-text', origin), reset: $('.origin-reset', origin), tip: $('.tip', field) };
  });
}

/** Opens the Advanced options when an engine error is about one of them (its field must be seen). */
export function reveal(errors) {
  const details = $('#advanced');
  if (details && !details.open && errors.some((e) => advancedPaths.has(e.path))) details.open = true;
}

/** A flag's value while the engine refuses the plan: the profile's own. */
const fallback = (k) => (isFlag(k) ? fw.setting(framework(), k.name).value : plainDefault(k.path));

/** The tooltip lines of flag `k`: the profile's value and source, what it cannot do, the value for this plan. */
function flagNote(k, id, engineValue, mine) {
  const name = fw.shortName(id);
  const s = fw.setting(id, k.name);
  const lines = [`${name}: ${fw.valueWords(s.value)}.${s.source ? ` Source: ${s.source}.` : ''}`];
  if (s.cannot) lines.push(`${name} cannot do it: ${s.cannot}.`);
  if (mine === undefined && engineValue !== undefined && engineValue !== s.value)
    lines.push(`With this plan the engine takes ${fw.valueWords(engineValue)}.`);
  return lines.join('\n').replace(/\.\.(\n|$)/g, '.$1');
}

/** Shows the training software, its flags and where each comes from. */
function renderFramework(resolved) {
  const id = framework();
  const name = fw.shortName(id);
  const mine = getIn(state.scenario, FRAMEWORK);
  setText($('#f-framework-hint'), `${mine === undefined ? 'The default. It' : 'It'} sets every flag marked “from ${name}”.`);
  const tipButton = $('[data-path="plan.framework"] .tip');
  if (tipButton && tipButton.dataset.more !== (fw.profile(id)?.about ?? '')) tipButton.dataset.more = fw.profile(id)?.about ?? '';
  let set = 0;
  let fromProfile = 0;
  for (const { k, text, reset, tip } of flags) {
    const own = getIn(state.scenario, k.path);
    if (own !== undefined) set += 1;
    else if (advancedPaths.has(k.path)) fromProfile += 1;
    setText(text, own === undefined ? `from ${name}` : 'set in the plan · ');
    show(reset, own !== undefined);
    setText(reset, `use ${name}'s`);
    const label = `Use ${name}'s value for ${k.label || k.name}`;
    if (reset.getAttribute('aria-label') !== label) reset.setAttribute('aria-label', label);
    const note = flagNote(k, id, resolved ? getIn(resolved, k.path) : undefined, own);
    if (tip && tip.dataset.more !== note) tip.dataset.more = note;
  }
  setText($('#advanced-note'), ` · ${fromProfile} flag${fromProfile === 1 ? '' : 's'} from ${name}` +
    (set ? `, ${set} set in the plan` : ''));
  setText($('#flags-hint'), `Each flag is as ${name} sets it until the plan sets it; its “?” gives the source.`);
  const resetAll = $('#flags-reset');
  show(resetAll, set > 0);
  setText(resetAll, `Use ${name}'s for every flag`);
}

/** Shows the plan: what the scenario sets, else the engine's value (none while the plan is refused). */
export function render() {
  const resolved = state.resolved?.scenario;
  for (const k of keys) {
    const el = $(`#f-${idOf(k)}`);
    if (state.local.has(el)) continue;
    const mine = getIn(state.scenario, k.path);
    if (k.path === 'plan.dp') {
      put($('#f-dp-auto'), mine === undefined);
      if (el.readOnly !== (mine === undefined)) el.readOnly = mine === undefined;
    }
    // Left out: the engine's value; while it refuses the plan, a flag's profile value, the
    // schema's default if it is a plain value, else nothing (a derived field shows no number).
    put(el, mine ?? (resolved ? getIn(resolved, k.path) : fallback(k)));
  }
  renderFramework(resolved);
  const dpLocal = state.local.has($('#f-dp'));
  if (dpLocal) put($('#f-dp-auto'), false);
  if (dpLocal && $('#f-dp').readOnly) $('#f-dp').readOnly = false;
  const derived = $('#f-dp-auto').checked;
  setText($('#f-dp-hint'), derived ? `derived: ${rule('plan.dp')}` : 'set by you; the engine checks it against the GPUs');
  const seq = presetSeqLen();
  setText($('#f-seq_len-hint'), seq ? `the model was trained at ${integer(seq)}` : '');
  setText($('#f-global_batch-hint'), state.resolved
    ? `${integer(state.resolved.micro_batches)} micro-batches per iteration per replica` : '');
}
