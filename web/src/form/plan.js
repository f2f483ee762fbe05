// The plan: every key of the schema the page shows under "Parallelism and batch" (control "plan")
// or "More Megatron-LM options" (control "advanced"), built from the schema: a new boolean plan key
// in the engine appears among the options with no change here. A key the scenario leaves out
// shows the engine's value (resolve()): DP derived from the GPUs, the effective ZeRO stage, the
// sequence length of the model. While the engine refuses the plan, derived fields show no number.
import { $, fill, h } from '../dom.js';
import { keysFor, plainDefault, rule } from '../schema.js';
import { on } from './bind.js';
import { keyField, put, readNumber, setText, valueOf } from './fields.js';
import { presetSeqLen } from './model.js';
import { ppChanged } from './placement.js';
import { edit, getIn, markLocal, plan, state } from './state.js';

// Numbers first (the plan's, then the scenario's sequence length), then menus, then checkboxes.
const TYPE_RANK = { integer: 0, number: 0, choice: 1, boolean: 2 };
const OBJECT_RANK = { plan: 0, scenario: 1 };
const WITH_HINT = new Set(['plan.dp', 'plan.global_batch', 'seq_len']);
const shown = (control) => keysFor(control).filter((k) => TYPE_RANK[k.type] !== undefined)
  .sort((a, b) => TYPE_RANK[a.type] - TYPE_RANK[b.type] || (OBJECT_RANK[a.object] ?? 2) - (OBJECT_RANK[b.object] ?? 2));
let keys = [];
const idOf = (k) => k.name; // f-tp, f-seq_len, f-flash_attention: the page's ids as they always were
const integer = (x) => x.toLocaleString('en-US');

function bind(k, el) {
  on(el, () => {
    if (el.type === 'number') {
      const r = readNumber(el, { optional: k.default === null });
      markLocal(el, k.path, r.message);
      if (r.message) return;
      edit(k.path, r.empty ? undefined : r.value);
      if (k.path === 'plan.pp') ppChanged(r.value);
      return;
    }
    const v = valueOf(el);
    edit(k.path, k.type === 'integer' ? Number(v) : v);
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

/** Builds the plan's fields into #plan-fields (the options in a <details>, #advanced-grid). */
export function build() {
  const make = (k) => {
    const f = keyField(k, k.path, idOf(k), { hint: WITH_HINT.has(k.path) ? '' : undefined });
    const el = $(`#f-${idOf(k)}`, f);
    bind(k, el);
    if (k.path === 'plan.dp') $('.control', f).append(dpDerive(el));
    return f;
  };
  const main = shown('plan');
  const advanced = shown('advanced');
  keys = [...main, ...advanced];
  fill($('#plan-fields'),
    h('div', { class: 'grid' }, main.map(make)),
    h('details', { class: 'advanced' }, h('summary', null, 'More Megatron-LM options'),
      h('div', { class: 'grid', id: 'advanced-grid' }, advanced.map(make))));
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
    // Left out: the engine's value; while it refuses the plan, the schema's default if it is a
    // plain value, else nothing (a derived field shows no number).
    put(el, mine ?? (resolved ? getIn(resolved, k.path) : plainDefault(k.path)));
  }
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
