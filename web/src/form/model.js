// The model: a preset (searchable list) or a custom shape. Custom fields are built from the
// schema's model keys; a custom model starts as a copy of the preset on show, as the engine
// resolved it (every key filled in).
import { $, fill, h } from '../dom.js';
import { keysFor, keysOf, required } from '../schema.js';
import { field, keyField, put, radios, readNumber, setText, show, valueOf } from './fields.js';
import { on } from './bind.js';
import { edit, markLocal, state } from './state.js';

let presets;
const byId = (list, id) => list.find((x) => x.id === id);
const customKeys = () => keysFor('model').filter((k) => k.object === 'model');
const isPreset = () => typeof state.scenario?.model === 'string';

/** "80 layers · hidden 8,192 · 64 heads (8 KV) · FFN 28,672 SwiGLU · vocabulary 128,256 · trained at 8,192 tokens" */
function modelCard(m) {
  if (!m) return '';
  const n = (x) => x.toLocaleString('en-US');
  const ffn = { swiglu: 'SwiGLU', geglu: 'GeGLU', gelu: 'GeLU', relu: 'ReLU', squared_relu: 'squared ReLU' }[m.ffn_type] ?? m.ffn_type;
  return `${m.layers} layers · hidden ${n(m.hidden)} · ${m.heads} heads` +
    `${m.kv_heads && m.kv_heads !== m.heads ? ` (${m.kv_heads} KV)` : ''} · FFN ${n(m.ffn_hidden)} ${ffn}` +
    ` · vocabulary ${n(m.vocab)} · trained at ${n(m.seq_len)} tokens`;
}

function fillModelList(query) {
  const select = $('#f-model');
  const current = isPreset() ? state.scenario.model : '';
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const match = (m) => words.every((w) => `${m.name} ${m.id}`.toLowerCase().includes(w));
  const shown = presets.models.filter((m) => match(m) || m.id === current);
  fill(select, shown.map((m) => h('option', { value: m.id }, m.name)));
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
  search.addEventListener('keydown', (e) => {
    if (e.key === 'ArrowDown') { e.preventDefault(); $('#f-model').focus(); }
  });
  const select = on(h('select', { id: 'f-model', name: 'model', size: 7 }), (el) => { if (el.value) edit('model', el.value); });
  const custom = customKeys().sort((a, b) => rank(a) - rank(b)).map((k) => {
    const f = keyField(k, k.path, `m-${k.name}`, { cls: k.type === 'text' ? 'wide' : '' });
    const el = $(`#f-m-${k.name}`, f);
    on(el, () => {
      if (el.type === 'number') {
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
      field('model', 'model', 'Model preset', 'model', select, { hint: '' })),
    h('div', { id: 'model-custom', class: 'panel grid', hidden: true }, custom));
  $('#f-model-hint').id = 'model-card';
  select.setAttribute('aria-describedby', 'model-card');
  fillModelList('');
}

// Text first (the name, across the grid), then numbers, menus, checkboxes.
const rank = (k) => ({ text: 0, integer: 1, number: 1, choice: 2, boolean: 3 }[k.type] ?? 4);

/** Shows the scenario's model (and, for a custom one, the engine's values of the keys it leaves out). */
export function render() {
  const preset = isPreset();
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
  for (const k of customKeys()) {
    const el = $(`#f-m-${k.name}`);
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

/** The preset's training context ("the model was trained at 8,192"), for the sequence length's hint. */
export function presetSeqLen() {
  return isPreset() ? byId(presets.models, state.scenario.model)?.seq_len : undefined;
}
