// The inputs: built from the presets, read into a scenario (the engine's JSON form), written
// from one. Values go to the engine as typed: nothing is corrected here. Only an empty or
// non-numeric field is stopped here ("enter a number"); every rule is the engine's, and its
// error comes back with the JSON path of the field that broke it (data-path on each field).
import { $, $$, fill, h } from './dom.js';
import { tip } from './tooltip.js';

// The engine's defaults for keys a scenario may leave out (engine/src/scenario.cpp, parse_plan).
export const PLAN_DEFAULTS = {
  tp: 1, pp: 1, cp: 1, vpp: 1, micro_batch: 1, sequence_parallel: false, recompute: 'none',
  distributed_optimizer: false, zero_stage: 0, precision: 'bf16', flash_attention: true,
  overlap_grad_reduce: true, overlap_param_gather: true, tp_comm_overlap: false,
  overlap_p2p: true, grad_reduce_in_fp32: true,
};
const ADVANCED = ['flash_attention', 'overlap_grad_reduce', 'overlap_param_gather', 'tp_comm_overlap',
  'overlap_p2p', 'grad_reduce_in_fp32'];
const MODEL_INTS = ['layers', 'hidden', 'heads', 'kv_heads', 'ffn_hidden', 'vocab'];
const GPU_PEAKS = ['bf16', 'fp16', 'fp8', 'fp32'];
const CUSTOM = '__custom__';
const CUSTOM_LINK = '__link__';
// The plan keys the form has a control for; others (from a link or a file) are carried as they
// are, so that a scenario the form cannot show in full still gives the same estimate.
const PLAN_KEYS = new Set(['dp', ...Object.keys(PLAN_DEFAULTS), 'global_batch']);

let presets;
// What the last written scenario had beyond the form's controls: plan keys, top-level keys,
// keys of an inline model or GPU, and inline (custom) link objects, by select id.
let carried = { plan: {}, top: {}, model: {}, gpu: {}, links: {} };
const byId = (list, id) => list.find((x) => x.id === id);

// ---------------------------------------------------------------------------------------------
// Field builders. Each field: <div class=field data-path=...> label, tip, control, hint, error.

function field(path, id, label, term, control, { unit, hint, cls } = {}) {
  const hintEl = hint !== undefined ? h('p', { class: 'hint', id: `f-${id}-hint` }, hint) : null;
  const described = [unit ? `f-${id}-unit` : null, hintEl ? `f-${id}-hint` : null].filter(Boolean);
  if (described.length) control.setAttribute('aria-describedby', described.join(' '));
  return h('div', { class: `field ${cls ?? ''}`, 'data-path': path },
    h('div', { class: 'label-row' }, h('label', { for: `f-${id}` }, label), term ? tip(term, label) : null),
    h('div', { class: 'control' }, control, unit ? h('span', { class: 'unit', id: `f-${id}-unit` }, unit) : null),
    hintEl,
    h('p', { class: 'error', id: `f-${id}-error`, role: 'alert', hidden: true }));
}

function numberInput(id, { step = 1, min = 1 } = {}) {
  return h('input', {
    id: `f-${id}`, name: id, type: 'number', step: String(step), min: min === null ? undefined : String(min),
    inputmode: step === 1 ? 'numeric' : 'decimal', autocomplete: 'off',
  });
}

function numberField(path, id, label, term, opts = {}) {
  return field(path, id, label, term, numberInput(id, opts), opts);
}

function selectField(path, id, label, term, options, opts = {}) {
  const select = h('select', { id: `f-${id}`, name: id },
    options.map(([value, text]) => h('option', { value }, text)));
  return field(path, id, label, term, select, opts);
}

function checkField(path, id, label, term) {
  return h('div', { class: 'field check', 'data-path': path },
    h('div', { class: 'label-row' },
      h('input', { id: `f-${id}`, name: id, type: 'checkbox' }),
      h('label', { for: `f-${id}` }, label), term ? tip(term, label) : null),
    h('p', { class: 'error', id: `f-${id}-error`, role: 'alert', hidden: true }));
}

function radios(name, label, choices) {
  return h('div', { class: 'segmented', role: 'radiogroup', 'aria-label': label },
    choices.map(([value, text]) => h('label', null,
      h('input', { type: 'radio', name, value, id: `f-${name}-${value}` }), h('span', null, text))));
}

// ---------------------------------------------------------------------------------------------

function modelLabel(m) { return m.name; }

function gpuLabel(g) { return `${g.name} (${g.memory_gib} GiB)`; }

function nodeLabel(n) {
  const gpu = byId(presets.gpus, n.gpu);
  return `${n.name.replace(/\s*\(.*\)$/, '')} · ${n.gpus_per_node} × ${gpu ? gpu.name.replace(/^(NVIDIA|AMD|Intel|Huawei) /, '') : n.gpu}`;
}

function linkName(id) { return byId(presets.links, id)?.name ?? id; }

function modelCard(m) {
  if (!m) return '';
  const ffn = { swiglu: 'SwiGLU', geglu: 'GeGLU', gelu: 'GeLU', relu: 'ReLU', squared_relu: 'squared ReLU' }[m.ffn_type] ?? m.ffn_type;
  return `${m.layers} layers · hidden ${m.hidden.toLocaleString('en-US')} · ${m.heads} heads` +
    `${m.kv_heads && m.kv_heads !== m.heads ? ` (${m.kv_heads} KV)` : ''} · FFN ${m.ffn_hidden.toLocaleString('en-US')} ${ffn}` +
    ` · vocabulary ${m.vocab.toLocaleString('en-US')} · trained at ${m.seq_len.toLocaleString('en-US')} tokens`;
}

function nodeCard(n) {
  if (!n) return '';
  const gpu = byId(presets.gpus, n.gpu);
  return `${n.gpus_per_node} × ${gpu?.name ?? n.gpu} (${gpu?.memory_gib ?? '?'} GiB) per node · ` +
    `${linkName(n.intra_node_link)} inside · ${n.nics_per_node} × ${linkName(n.inter_node_link)} between nodes`;
}

function fillModelList(query) {
  const select = $('#f-model');
  const current = select.value || select.dataset.value;
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const match = (m) => words.every((w) => `${m.name} ${m.id}`.toLowerCase().includes(w));
  const shown = presets.models.filter((m) => match(m) || m.id === current);
  fill(select, shown.map((m) => h('option', { value: m.id }, modelLabel(m))));
  if (current) select.value = current;
  $('#model-count').textContent = words.length
    ? `${shown.filter(match).length} of ${presets.models.length} models match`
    : `${presets.models.length} models`;
}

/** Builds every input from the presets into the page's fieldsets. */
export function buildForm(thePresets) {
  presets = thePresets;
  presets.models.sort((a, b) => a.name.localeCompare(b.name, 'en', { numeric: true }));
  const vendors = [...new Set(presets.gpus.map((g) => g.vendor))];
  const gpuOptions = vendors.map((v) => h('optgroup', { label: v },
    presets.gpus.filter((g) => g.vendor === v).map((g) => h('option', { value: g.id }, gpuLabel(g)))));
  const nodeOptions = vendors.map((v) => {
    const nodes = presets.nodes.filter((n) => byId(presets.gpus, n.gpu)?.vendor === v);
    return nodes.length ? h('optgroup', { label: v }, nodes.map((n) => h('option', { value: n.id }, nodeLabel(n)))) : null;
  });
  const linkOptions = (scope) => presets.links.filter((l) => l.scope === scope)
    .map((l) => h('option', { value: l.id }, l.name));
  const arches = [...new Set(presets.gpus.map((g) => g.arch))].sort();

  // Model ------------------------------------------------------------------------------------
  const search = h('input', {
    id: 'f-model-search', type: 'search', placeholder: 'e.g. llama 70b', autocomplete: 'off',
    'data-local': 'true', 'aria-controls': 'f-model', 'aria-describedby': 'model-count',
  });
  search.addEventListener('input', () => fillModelList(search.value));
  search.addEventListener('keydown', (e) => {
    if (e.key === 'ArrowDown') { e.preventDefault(); $('#f-model').focus(); }
  });
  const modelSelect = h('select', { id: 'f-model', name: 'model', size: 7 });
  fill($('#model-fields'),
    radios('model-mode', 'Model source', [['preset', 'Preset'], ['custom', 'Custom']]),
    h('div', { id: 'model-preset', class: 'panel' },
      h('div', { class: 'field' },
        h('div', { class: 'label-row' }, h('label', { for: 'f-model-search' }, 'Search models')),
        h('div', { class: 'control' }, search),
        h('p', { class: 'hint', id: 'model-count', 'aria-live': 'polite' })),
      h('div', { class: 'field', 'data-path': 'model' },
        h('div', { class: 'label-row' }, h('label', { for: 'f-model' }, 'Model preset'), tip('model')),
        h('div', { class: 'control' }, modelSelect),
        h('p', { class: 'hint', id: 'model-card' }),
        h('p', { class: 'error', id: 'f-model-error', role: 'alert', hidden: true }))),
    h('div', { id: 'model-custom', class: 'panel grid', hidden: true },
      field('model.name', 'm-name', 'Name', null, h('input', { id: 'f-m-name', type: 'text', autocomplete: 'off' }), { cls: 'wide' }),
      numberField('model.layers', 'm-layers', 'Layers', 'layers'),
      numberField('model.hidden', 'm-hidden', 'Hidden size', 'hidden'),
      numberField('model.heads', 'm-heads', 'Heads', 'heads'),
      numberField('model.kv_heads', 'm-kv_heads', 'KV heads', 'kv_heads'),
      numberField('model.ffn_hidden', 'm-ffn_hidden', 'FFN size', 'ffn_hidden'),
      numberField('model.vocab', 'm-vocab', 'Vocabulary', 'vocab', { unit: 'tokens' }),
      selectField('model.ffn_type', 'm-ffn_type', 'FFN type', null,
        [['swiglu', 'SwiGLU'], ['geglu', 'GeGLU'], ['gelu', 'GeLU'], ['relu', 'ReLU'], ['squared_relu', 'squared ReLU']]),
      selectField('model.position', 'm-position', 'Positions', null, [['rope', 'RoPE / ALiBi'], ['learned', 'learned']]),
      selectField('model.norm', 'm-norm', 'Norm', null, [['rmsnorm', 'RMSNorm'], ['layernorm', 'LayerNorm']]),
      checkField('model.tied_embeddings', 'm-tied_embeddings', 'Tied embeddings'),
      checkField('model.bias', 'm-bias', 'Linear biases')));

  // Cluster ----------------------------------------------------------------------------------
  fill($('#cluster-fields'),
    radios('cluster-mode', 'Cluster source', [['preset', 'Node preset'], ['custom', 'Custom']]),
    h('div', { id: 'cluster-preset', class: 'panel' },
      field('cluster.node', 'node', 'Node', 'cluster', h('select', { id: 'f-node', name: 'node' }, nodeOptions),
        { hint: '' })),
    h('div', { id: 'cluster-custom', class: 'panel grid', hidden: true },
      field('cluster.gpu', 'gpu', 'GPU', null,
        h('select', { id: 'f-gpu', name: 'gpu' }, gpuOptions, h('option', { value: CUSTOM }, 'Custom GPU…')),
        { cls: 'wide' }),
      h('div', { id: 'gpu-custom', class: 'panel grid sub wide', hidden: true },
        field('cluster.gpu.name', 'g-name', 'GPU name', null, h('input', { id: 'f-g-name', type: 'text', autocomplete: 'off' })),
        selectField('cluster.gpu.arch', 'g-arch', 'Architecture', null, arches.map((a) => [a, a])),
        numberField('cluster.gpu.memory_gib', 'g-memory_gib', 'Memory', 'capacity', { step: 'any', min: 0, unit: 'GiB' }),
        numberField('cluster.gpu.memory_bandwidth_GBps', 'g-memory_bandwidth_GBps', 'Memory bandwidth', null, { step: 'any', min: 0, unit: 'GB/s' }),
        GPU_PEAKS.map((p) => numberField(`cluster.gpu.peak_tflops.${p}`, `g-peak-${p}`, `Peak ${p}`, null,
          { step: 'any', min: 0, unit: 'TFLOP/s', hint: p === 'bf16' ? 'dense; leave empty if absent' : undefined }))),
      numberField('cluster.gpus_per_node', 'gpus_per_node', 'GPUs per node', 'gpus_per_node', { unit: 'GPUs' }),
      numberField('cluster.nics_per_node', 'nics_per_node', 'NICs per node', 'nics_per_node', { unit: 'NICs' }),
      selectField('cluster.intra_node_link', 'intra_node_link', 'Intra-node link', 'intra_node_link', [], { cls: 'wide' }),
      selectField('cluster.inter_node_link', 'inter_node_link', 'Inter-node link', 'inter_node_link', [], { cls: 'wide' })),
    numberField('cluster.nodes', 'nodes', 'Nodes', 'nodes', { unit: 'nodes', hint: '' }));
  fill($('#f-intra_node_link'), linkOptions('intra_node'));
  fill($('#f-inter_node_link'), linkOptions('inter_node'));

  // Plan -------------------------------------------------------------------------------------
  const dpAuto = h('label', { class: 'inline-check' },
    h('input', { id: 'f-dp-auto', type: 'checkbox', checked: true }), 'derive');
  const dpInput = numberInput('dp');
  const dpField = field('plan.dp', 'dp', 'DP', 'dp', dpInput, { hint: '' });
  $('.control', dpField).append(h('span', { class: 'unit', id: 'f-dp-unit' }, 'replicas'), dpAuto);
  dpInput.setAttribute('aria-describedby', `f-dp-unit ${dpInput.getAttribute('aria-describedby') ?? ''}`.trim());
  fill($('#plan-fields'),
    h('div', { class: 'grid' },
      numberField('plan.tp', 'tp', 'TP', 'tp', { unit: 'GPUs' }),
      numberField('plan.pp', 'pp', 'PP', 'pp', { unit: 'stages' }),
      dpField,
      numberField('plan.cp', 'cp', 'CP', 'cp', { unit: 'GPUs' }),
      numberField('plan.vpp', 'vpp', 'VPP', 'vpp', { unit: 'chunks' }),
      numberField('plan.micro_batch', 'micro_batch', 'Micro-batch', 'micro_batch', { unit: 'samples' }),
      numberField('plan.global_batch', 'global_batch', 'Global batch', 'global_batch', { unit: 'samples', hint: '' }),
      numberField('seq_len', 'seq_len', 'Sequence length', 'seq_len', { unit: 'tokens', hint: '' }),
      selectField('plan.recompute', 'recompute', 'Recompute', 'recompute',
        [['none', 'none'], ['selective', 'selective'], ['full', 'full']]),
      selectField('plan.precision', 'precision', 'Precision', 'precision',
        [['bf16', 'bf16'], ['fp16', 'fp16'], ['fp8', 'fp8'], ['fp32', 'fp32']]),
      checkField('plan.sequence_parallel', 'sequence_parallel', 'Sequence parallel', 'sequence_parallel'),
      checkField('plan.distributed_optimizer', 'distributed_optimizer', 'Distributed optimizer', 'distributed_optimizer')),
    h('details', { class: 'advanced' }, h('summary', null, 'More Megatron-LM options'),
      h('div', { class: 'grid' },
        selectField('plan.zero_stage', 'zero_stage', 'ZeRO stage', 'zero_stage',
          [['0', '0'], ['1', '1'], ['2', '2'], ['3', '3']]),
        checkField('plan.flash_attention', 'flash_attention', 'FlashAttention', 'flash_attention'),
        checkField('plan.overlap_grad_reduce', 'overlap_grad_reduce', 'Overlap grad reduce', 'overlap_grad_reduce'),
        checkField('plan.overlap_param_gather', 'overlap_param_gather', 'Overlap param gather', 'overlap_param_gather'),
        checkField('plan.tp_comm_overlap', 'tp_comm_overlap', 'TP comm overlap', 'tp_comm_overlap'),
        checkField('plan.overlap_p2p', 'overlap_p2p', 'Overlap p2p', 'overlap_p2p'),
        checkField('plan.grad_reduce_in_fp32', 'grad_reduce_in_fp32', 'Grad reduce in fp32', 'grad_reduce_in_fp32'))));

  $('#f-dp-auto').addEventListener('change', () => { dpInput.readOnly = $('#f-dp-auto').checked; });
  for (const name of ['model-mode', 'cluster-mode'])
    for (const r of $$(`input[name=${name}]`)) r.addEventListener('change', () => switchMode(name, r.value));
  $('#f-gpu').addEventListener('change', () => {
    const custom = $('#f-gpu').value === CUSTOM;
    if (custom) {
      writeCustomGpu(byId(presets.gpus, $('#f-gpu').dataset.last) ?? presets.gpus[0]);
      carried.gpu = {};
    }
    else $('#f-gpu').dataset.last = $('#f-gpu').value;
    $('#gpu-custom').hidden = !custom;
  });
  fillModelList('');
}

function mode(name) { return $(`input[name=${name}]:checked`)?.value ?? 'preset'; }

function setMode(name, value) {
  $(`#f-${name}-${value}`).checked = true;
  const prefix = name.split('-')[0];
  $(`#${prefix}-preset`).hidden = value !== 'preset';
  $(`#${prefix}-custom`).hidden = value !== 'custom';
}

/** Switching to custom starts from the preset on show (and back keeps the preset chosen). */
function switchMode(name, value) {
  if (name === 'model-mode' && value === 'custom') {
    const m = byId(presets.models, $('#f-model').value);
    if (m) {
      writeCustomModel(m);
      carried.model = {};
    }
  }
  if (name === 'cluster-mode' && value === 'custom') {
    const n = byId(presets.nodes, $('#f-node').value);
    if (n) {
      setValue('gpu', n.gpu);
      $('#f-gpu').dataset.last = n.gpu;
      $('#gpu-custom').hidden = true;
      setValue('gpus_per_node', n.gpus_per_node);
      setValue('nics_per_node', n.nics_per_node);
      setValue('intra_node_link', n.intra_node_link);
      setValue('inter_node_link', n.inter_node_link);
    }
  }
  setMode(name, value);
}

function setValue(id, v) {
  const el = $(`#f-${id}`);
  if (el.type === 'checkbox') el.checked = !!v;
  else el.value = v === undefined || v === null ? '' : String(v);
}

function writeCustomModel(m) {
  setValue('m-name', m.id ? `${m.name} (custom)` : m.name ?? 'custom model');
  for (const k of MODEL_INTS) setValue(`m-${k}`, m[k] ?? (k === 'kv_heads' ? m.heads : ''));
  setValue('m-ffn_type', m.ffn_type);
  setValue('m-position', m.position);
  setValue('m-norm', m.norm ?? 'layernorm');
  setValue('m-tied_embeddings', m.tied_embeddings);
  setValue('m-bias', m.bias ?? (m.norm ?? 'layernorm') === 'layernorm');
}

function writeCustomGpu(g) {
  setValue('g-name', g.id ? `${g.name} (custom)` : g.name ?? 'custom GPU');
  setValue('g-arch', g.arch ?? 'hopper');
  setValue('g-memory_gib', g.memory_gib);
  setValue('g-memory_bandwidth_GBps', g.memory_bandwidth_GBps);
  for (const p of GPU_PEAKS) setValue(`g-peak-${p}`, g.peak_tflops?.[p]);
}

// ---------------------------------------------------------------------------------------------
// Reading

class Reader {
  constructor() { this.errors = []; }

  /** A number as typed (the engine checks integrality and ranges); empty -> a local error. */
  num(id, path, { optional = false } = {}) {
    const el = $(`#f-${id}`);
    const raw = el.value.trim();
    if (raw === '' || !Number.isFinite(Number(raw))) {
      if (optional && raw === '' && el.validity.valid) return undefined;
      this.errors.push({ path, id, message: el.validity.badInput || raw !== '' ? 'Enter a number.' : 'Enter a value.' });
      return undefined;
    }
    return Number(raw);
  }

  check(id) { return $(`#f-${id}`).checked; }

  select(id) { return $(`#f-${id}`).value; }
}

/** GPUs in the cluster as the form stands (NaN while a field is not a number). */
export function clusterGpus() {
  const nodes = Number($('#f-nodes').value);
  if (mode('cluster-mode') === 'preset') return nodes * (byId(presets.nodes, $('#f-node').value)?.gpus_per_node ?? NaN);
  return nodes * Number($('#f-gpus_per_node').value);
}

/** The engine's rule for a left-out dp: GPUs / (tp pp cp), at least 1. */
export function derivedDp(gpus, tp, pp, cp) {
  const mp = tp * pp * cp;
  if (![gpus, mp].every((x) => Number.isInteger(x) && x > 0)) return NaN;
  return Math.max(1, Math.floor(gpus / mp));
}

/** The scenario the form describes: {scenario, errors} (errors: fields that are not numbers). */
export function readScenario() {
  const r = new Reader();
  const seqLen = r.num('seq_len', 'seq_len');
  const s = {};
  if (mode('model-mode') === 'preset') {
    s.model = r.select('model');
    if (!s.model) r.errors.push({ path: 'model', id: 'model', message: 'Choose a model.' });
  } else {
    const m = { ...carried.model, name: $('#f-m-name').value.trim() || 'custom model' };
    for (const k of MODEL_INTS) m[k] = r.num(`m-${k}`, `model.${k}`);
    m.seq_len = seqLen;
    m.ffn_type = r.select('m-ffn_type');
    m.position = r.select('m-position');
    m.norm = r.select('m-norm');
    m.tied_embeddings = r.check('m-tied_embeddings');
    m.bias = r.check('m-bias');
    s.model = m;
  }
  if (mode('cluster-mode') === 'preset') {
    s.cluster = { node: r.select('node'), nodes: r.num('nodes', 'cluster.nodes') };
  } else {
    let gpu = r.select('gpu');
    const linkOf = (id) => {
      const v = r.select(id);
      return v === CUSTOM_LINK ? carried.links[id] : v;
    };
    if (gpu === CUSTOM) {
      const peaks = {};
      for (const p of GPU_PEAKS) {
        const v = r.num(`g-peak-${p}`, `cluster.gpu.peak_tflops.${p}`, { optional: true });
        if (v !== undefined) peaks[p] = v;
      }
      gpu = {
        ...carried.gpu,
        name: $('#f-g-name').value.trim() || 'custom GPU',
        arch: r.select('g-arch'),
        memory_gib: r.num('g-memory_gib', 'cluster.gpu.memory_gib'),
        memory_bandwidth_GBps: r.num('g-memory_bandwidth_GBps', 'cluster.gpu.memory_bandwidth_GBps'),
        peak_tflops: peaks,
      };
    }
    s.cluster = {
      gpu,
      gpus_per_node: r.num('gpus_per_node', 'cluster.gpus_per_node'),
      nodes: r.num('nodes', 'cluster.nodes'),
      intra_node_link: linkOf('intra_node_link'),
      inter_node_link: linkOf('inter_node_link'),
      nics_per_node: r.num('nics_per_node', 'cluster.nics_per_node'),
    };
  }
  const plan = { tp: r.num('tp', 'plan.tp'), pp: r.num('pp', 'plan.pp') };
  if (!r.check('dp-auto')) plan.dp = r.num('dp', 'plan.dp');
  Object.assign(plan, {
    cp: r.num('cp', 'plan.cp'),
    vpp: r.num('vpp', 'plan.vpp'),
    micro_batch: r.num('micro_batch', 'plan.micro_batch'),
    global_batch: r.num('global_batch', 'plan.global_batch'),
    sequence_parallel: r.check('sequence_parallel'),
    recompute: r.select('recompute'),
    distributed_optimizer: r.check('distributed_optimizer'),
    precision: r.select('precision'),
    zero_stage: Number(r.select('zero_stage')),
  });
  for (const k of ADVANCED) plan[k] = r.check(k);
  s.plan = { ...plan, ...carried.plan };
  s.seq_len = seqLen;
  Object.assign(s, carried.top);
  return { scenario: s, errors: r.errors };
}

// ---------------------------------------------------------------------------------------------
// Writing

/** Puts a scenario into the form. DP is left derived when the scenario's dp is what the engine
 * would derive anyway (the same scenario), so that changing TP or PP keeps it consistent. */
export function writeScenario(s) {
  const group = s.cluster?.groups ? s.cluster.groups[0] : s.cluster;
  const pick = (o, keep) => Object.fromEntries(Object.entries(o ?? {}).filter(([k]) => keep(k)));
  const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
  carried = {
    plan: pick(s.plan, (k) => !PLAN_KEYS.has(k)),
    // The name describes the scenario as it was written; it is not carried into edits of it.
    top: pick(s, (k) => !['model', 'cluster', 'plan', 'seq_len', 'name'].includes(k)),
    model: isObject(s.model) ? pick(s.model, (k) => ![...MODEL_INTS, 'name', 'seq_len', 'ffn_type', 'position',
      'norm', 'tied_embeddings', 'bias'].includes(k)) : {},
    gpu: isObject(group.gpu) ? pick(group.gpu, (k) => !['name', 'arch', 'memory_gib', 'memory_bandwidth_GBps',
      'peak_tflops'].includes(k)) : {},
    links: {},
  };
  for (const id of ['intra_node_link', 'inter_node_link']) {
    const select = $(`#f-${id}`);
    select.querySelector(`option[value="${CUSTOM_LINK}"]`)?.remove();
    if (isObject(group[id])) {
      carried.links[id] = group[id];
      select.append(h('option', { value: CUSTOM_LINK }, `${group[id].name ?? 'custom link'} (custom, from the scenario)`));
    }
  }
  if (typeof s.model === 'string') {
    setMode('model-mode', 'preset');
    $('#f-model-search').value = '';
    $('#f-model').dataset.value = s.model;
    fillModelList('');
    $('#f-model').value = s.model;
  } else {
    setMode('model-mode', 'custom');
    writeCustomModel(s.model);
  }
  const model = typeof s.model === 'string' ? byId(presets.models, s.model) : s.model;
  setValue('seq_len', s.seq_len ?? model?.seq_len);

  setValue('nodes', group.nodes);
  if (group.node) {
    setMode('cluster-mode', 'preset');
    setValue('node', group.node);
  } else {
    setMode('cluster-mode', 'custom');
    if (typeof group.gpu === 'string') {
      setValue('gpu', group.gpu);
      $('#f-gpu').dataset.last = group.gpu;
      $('#gpu-custom').hidden = true;
    } else {
      setValue('gpu', CUSTOM);
      writeCustomGpu(group.gpu);
      $('#gpu-custom').hidden = false;
    }
    setValue('gpus_per_node', group.gpus_per_node);
    setValue('nics_per_node', group.nics_per_node ?? group.gpus_per_node);
    for (const id of ['intra_node_link', 'inter_node_link'])
      setValue(id, carried.links[id] ? CUSTOM_LINK : group[id]);
  }

  const plan = { ...PLAN_DEFAULTS, ...s.plan };
  for (const k of ['tp', 'pp', 'cp', 'vpp', 'micro_batch', 'global_batch', 'recompute', 'precision', 'zero_stage',
    'sequence_parallel', 'distributed_optimizer', ...ADVANCED]) setValue(k, plan[k]);
  const derived = derivedDp(clusterGpus(), plan.tp, plan.pp, plan.cp);
  const auto = s.plan.dp === undefined || s.plan.dp === derived;
  $('#f-dp-auto').checked = auto;
  $('#f-dp').readOnly = auto;
  setValue('dp', auto ? derived : s.plan.dp);
}

// ---------------------------------------------------------------------------------------------
// Hints and errors next to the controls

/** Sets text only when it changes (a write, even of the same text, costs a style pass). */
function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

/** Updates the derived values shown beside the inputs (cheap; runs on every change). */
export function refreshHints(report) {
  const gpus = clusterGpus();
  const tp = Number($('#f-tp').value), pp = Number($('#f-pp').value), cp = Number($('#f-cp').value);
  const auto = $('#f-dp-auto').checked;
  const dpHint = $('#f-dp-hint');
  if (auto) {
    const d = derivedDp(gpus, tp, pp, cp);
    if ($('#f-dp').value !== String(Number.isFinite(d) ? d : '')) setValue('dp', Number.isFinite(d) ? d : '');
    setText(dpHint, Number.isFinite(d)
      ? `derived: ${gpus.toLocaleString('en-US')} GPUs ÷ (TP ${tp} × PP ${pp} × CP ${cp})`
      : 'derived from the GPU count');
  } else {
    setText(dpHint, 'set by you: TP × PP × CP × DP must equal the GPUs');
  }
  setText($('#f-nodes-hint'), Number.isFinite(gpus) ? `${gpus.toLocaleString('en-US')} GPUs in all` : '');
  if (mode('cluster-mode') === 'preset') setText($('#f-node-hint'), nodeCard(byId(presets.nodes, $('#f-node').value)));
  const model = mode('model-mode') === 'preset' ? byId(presets.models, $('#f-model').value) : null;
  setText($('#model-card'), modelCard(model));
  setText($('#f-seq_len-hint'), model ? `the model was trained at ${model.seq_len.toLocaleString('en-US')}` : '');
  setText($('#f-global_batch-hint'), report && !report.error
    ? `${report.micro_batches.toLocaleString('en-US')} micro-batches per iteration per replica`
    : '');
}

// Paths whose control is elsewhere: a custom model's seq_len is the plan's sequence length.
const ALIASES = { 'model.seq_len': 'seq_len' };
/** The visible field (its wrapper) a JSON path belongs to: the longest data-path prefix of it. */
export function fieldFor(path) {
  if (!path) return null;
  path = ALIASES[path] ?? path;
  let best = null;
  for (const el of $$('[data-path]')) {
    const p = el.dataset.path;
    if ((path === p || path.startsWith(p + '.') || path.startsWith(p + '[')) && el.offsetParent !== null &&
      (!best || p.length > best.dataset.path.length)) best = el;
  }
  return best;
}

export function clearErrors() {
  for (const el of $$('.field.invalid')) {
    el.classList.remove('invalid');
    const err = $('.error', el);
    err.hidden = true;
    err.textContent = '';
    for (const c of $$('input, select', el)) {
      c.removeAttribute('aria-invalid');
      const ids = (c.getAttribute('aria-describedby') ?? '').split(' ').filter((x) => x && x !== err.id);
      if (ids.length) c.setAttribute('aria-describedby', ids.join(' '));
      else c.removeAttribute('aria-describedby');
    }
  }
}

/** Shows `message` next to the control for `path`; returns false when no control has it. */
export function showError(path, message) {
  const el = fieldFor(path);
  if (!el) return false;
  el.classList.add('invalid');
  const err = $('.error', el);
  err.textContent = message;
  err.hidden = false;
  const control = $('input:not([type=checkbox]), select', el) ?? $('input', el);
  if (control) {
    control.setAttribute('aria-invalid', 'true');
    const ids = new Set((control.getAttribute('aria-describedby') ?? '').split(' ').filter(Boolean));
    ids.add(err.id);
    control.setAttribute('aria-describedby', [...ids].join(' '));
  }
  return true;
}
