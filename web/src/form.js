// The inputs: built from the presets, read into a scenario (the engine's JSON form), written
// from one. Values go to the engine as typed: nothing is corrected here. Only an empty or
// non-numeric field is stopped here ("enter a number"); every rule is the engine's, and its
// error comes back with the JSON path of the field that broke it (data-path on each field).
import { $, $$, fill, h } from './dom.js';
import {
  clusterGroups, defaultReplicaSets, defaultStageGroups, describeGroups, groupColor,
} from './groups.js';
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
const PLAN_KEYS = new Set(['dp', ...Object.keys(PLAN_DEFAULTS), 'global_batch', 'stages', 'replicas']);
// Stage rows are built one per pipeline stage up to this many (a typo like PP 9999 builds none).
const MAX_ROWS = 512;

let presets;
// What the last written scenario had beyond the form's controls: plan keys, top-level keys,
// keys of an inline model or GPU, inline (custom) link objects by select id, and explicit groups
// beyond the first (by group index; shown as "… (custom, from the scenario)").
let carried = { plan: {}, top: {}, model: {}, gpu: {}, links: {}, groups: {} };
// Where stages or replica sets run (plan.stages / plan.replicas): the mode on show ('none' is one
// group split evenly), whether the user placed them by hand (else they follow the cluster: each
// group gets the stages or replicas its GPUs hold), and the PP the stage rows were made for.
const layout = { mode: 'none', manual: { stages: false, replicas: false }, pp: NaN, optionsKey: '' };
const byId = (list, id) => list.find((x) => x.id === id);
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

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
  // Group 0 is the form as it always was (a node preset or custom nodes); more groups are a node
  // preset and a count each, and a link between the groups.
  nodeOptionsTemplate = h('select', null, nodeOptions.map((o) => o?.cloneNode(true)));
  fill($('#cluster-fields'),
    h('div', { id: 'group-0-head', class: 'group-head', hidden: true },
      h('span', { class: 'swatch', style: { background: groupColor(0) } }),
      h('strong', null, 'Group 0'), h('span', { class: 'hint', id: 'group-0-title' }),
      removeGroupButton(0)),
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
    numberField('cluster.nodes', 'nodes', 'Nodes', 'nodes', { unit: 'nodes', hint: '' }),
    h('div', { id: 'extra-groups', class: 'groups' }),
    h('div', { class: 'group-tools' },
      h('button', { type: 'button', id: 'add-group', onclick: addGroup }, '+ Add a group of other nodes'),
      tip('groups', 'groups of nodes')),
    field('cluster.inter_group_link', 'inter_group_link', 'Link between the groups', 'inter_group_link',
      h('select', { id: 'f-inter_group_link', name: 'inter_group_link' },
        h('option', { value: '' }, 'the slowest network of the groups (default)'), linkOptions('inter_node')),
      { cls: 'igl', hint: '' }));
  fill($('#f-intra_node_link'), linkOptions('intra_node'));
  fill($('#f-inter_node_link'), linkOptions('inter_node'));
  $('#f-inter_group_link').closest('.field').hidden = true;

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
        checkField('plan.grad_reduce_in_fp32', 'grad_reduce_in_fp32', 'Grad reduce in fp32', 'grad_reduce_in_fp32'),
        h('div', { class: 'field check wide', id: 'uneven-field' },
          h('div', { class: 'label-row' },
            h('input', { id: 'f-uneven', type: 'checkbox' }),
            h('label', { for: 'f-uneven' }, 'Uneven split: layers per stage'), tip('stage_map', 'layers per stage'))))));
  buildPlacement();

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
// Groups of nodes beyond the first (a heterogeneous cluster), and where the pipeline stages or
// the replica sets run on them (plan.stages / plan.replicas).

let nodeOptionsTemplate = null;

/** Re-estimates after a change made by a button (add or remove a group or a replica set). */
const notify = () => $('#inputs').dispatchEvent(new Event('change'));

function removeGroupButton(i) {
  return h('button', {
    type: 'button', class: 'link remove-group', 'aria-label': `Remove group ${i}`,
    onclick: () => removeGroup(i),
  }, 'Remove');
}

const extraGroups = () => $$('#extra-groups .group-card');
export function groupCount() { return 1 + extraGroups().length; }

function groupCard(i, g) {
  const select = h('select', { id: `f-grp${i}-node`, name: `grp${i}-node` },
    [...nodeOptionsTemplate.children].map((o) => o.cloneNode(true)));
  if (g.custom) {
    carried.groups[i] = g.custom;
    const d = describeGroups(g.custom, presets)[0];
    select.append(h('option', { value: CUSTOM },
      `${Number.isFinite(d?.gpusPerNode) ? d.gpusPerNode : '?'} × ${d?.gpu ?? 'GPU'} nodes (custom, from the scenario)`));
    select.value = CUSTOM;
  } else {
    select.value = g.node;
  }
  const nodes = numberInput(`grp${i}-nodes`);
  nodes.value = g.nodes === undefined || g.nodes === null ? '' : String(g.nodes);
  return h('div', { class: 'group-card field whole', 'data-group': i, 'data-path': `cluster.groups[${i}]`, 'data-label': `group ${i}` },
    h('div', { class: 'group-head' },
      h('span', { class: 'swatch', style: { background: groupColor(i) } }),
      h('strong', null, `Group ${i}`), h('span', { class: 'hint', id: `group-${i}-title` }),
      removeGroupButton(i)),
    h('div', null,
      field(`cluster.groups[${i}].node`, `grp${i}-node`, 'Node', null, select, { hint: '' }),
      field(`cluster.groups[${i}].nodes`, `grp${i}-nodes`, 'Nodes', null, nodes, { unit: 'nodes', hint: '' })),
    h('p', { class: 'error', id: `group-${i}-error`, role: 'alert', hidden: true }));
}

/** Groups 1… as they stand: {node, nodes} or {custom: group object, nodes} (nodes as typed). */
function extraGroupState() {
  return extraGroups().map((_, k) => {
    const i = k + 1;
    const node = $(`#f-grp${i}-node`).value;
    const nodes = $(`#f-grp${i}-nodes`).value;
    return node === CUSTOM ? { custom: carried.groups[i], nodes } : { node, nodes };
  });
}

function renderExtraGroups(list) {
  carried.groups = {};
  fill($('#extra-groups'), list.map((g, k) => groupCard(k + 1, g)));
  layout.optionsKey = '';
}

function addGroup() {
  const list = extraGroupState();
  const used = new Set([mode('cluster-mode') === 'preset' ? $('#f-node').value : '', ...list.map((g) => g.node)]);
  const node = ['dgx-h100', 'dgx-a100', 'hgx-h200', 'dgx-b200', 'mi300x-x8']
    .find((n) => !used.has(n) && byId(presets.nodes, n)) ?? presets.nodes[0].id;
  list.push({ node, nodes: 1 });
  renderExtraGroups(list);
  layout.manual = { stages: false, replicas: false };
  if (layout.mode === 'none') layout.mode = 'stages';
  notify();
  $(`#f-grp${list.length}-node`).focus();
}

function removeGroup(i) {
  const list = extraGroupState();
  if (!list.length) return;
  if (i === 0) {
    const first = list.shift();
    writeGroup0(first.custom ? { ...first.custom, nodes: first.nodes } : { node: first.node, nodes: first.nodes });
  } else {
    list.splice(i - 1, 1);
  }
  renderExtraGroups(list);
  layout.manual = { stages: false, replicas: false };
  if (!list.length) layout.mode = 'none';
  notify();
  $('#add-group').focus();
}

/** The cluster's groups as the form stands, without checks (for names and GPU counts). */
function draftGroups() {
  const nodes = Number($('#f-nodes').value);
  let first;
  if (mode('cluster-mode') === 'preset') first = { node: $('#f-node').value, nodes };
  else {
    const gpu = $('#f-gpu').value === CUSTOM ? { name: $('#f-g-name').value.trim() || 'custom GPU' } : $('#f-gpu').value;
    first = { gpu, gpus_per_node: Number($('#f-gpus_per_node').value), nodes };
  }
  return [first, ...extraGroupState().map((g) => (g.custom ? { ...g.custom, nodes: Number(g.nodes) }
    : { node: g.node, nodes: Number(g.nodes) }))];
}

/** Each group's name, GPU and GPU count as the form stands (see groups.js describeGroups). */
export function groupInfo() { return describeGroups({ groups: draftGroups() }, presets); }

// Placement ---------------------------------------------------------------------------------

const stageRowEls = () => $$('#stage-rows .map-row');
const replicaRowEls = () => $$('#replica-rows .map-row');

function mapCell(path, id, control, extra) {
  return h('div', { class: 'field', 'data-path': path },
    h('div', { class: 'control' }, control, extra),
    h('p', { class: 'error', id: `f-${id}-error`, role: 'alert', hidden: true }));
}

function autoCheck(id, label) {
  return h('label', { class: 'inline-check' },
    h('input', { type: 'checkbox', id: `f-${id}`, name: id, 'aria-label': label }), 'auto');
}

function stageRow(i) {
  const layers = numberInput(`st${i}-layers`);
  layers.setAttribute('aria-label', `Layers of stage ${i}`);
  return h('div', { class: 'map-row stage-grid', 'data-stage': i },
    h('span', { class: 'map-name' }, h('span', { class: 'swatch' }), `Stage ${i}`),
    mapCell(`plan.stages[${i}].group`, `st${i}-group`,
      h('select', { id: `f-st${i}-group`, name: `st${i}-group`, 'aria-label': `Group of stage ${i}` })),
    mapCell(`plan.stages[${i}].layers`, `st${i}-layers`, layers,
      autoCheck(`st${i}-auto`, `Balance the layers of stage ${i} automatically`)));
}

function replicaRow(i) {
  const count = numberInput(`rs${i}-count`);
  const mb = numberInput(`rs${i}-mb`);
  const mbField = field(`plan.replicas[${i}].micro_batches`, `rs${i}-mb`, 'Micro-batches', null, mb, { cls: 'rs-mb' });
  mb.setAttribute('aria-label', `Micro-batches per replica of set ${i}`);
  count.setAttribute('aria-label', `Replicas in set ${i}`);
  $('.control', mbField).append(autoCheck(`rs${i}-auto`, `Share micro-batches to replica set ${i} automatically`));
  return h('div', { class: 'map-row replica-grid', 'data-replica': i },
    h('span', { class: 'map-name' }, h('span', { class: 'swatch' }), `Set ${i}`),
    mapCell(`plan.replicas[${i}].group`, `rs${i}-group`,
      h('select', { id: `f-rs${i}-group`, name: `rs${i}-group`, 'aria-label': `Group of replica set ${i}` })),
    h('button', {
      type: 'button', class: 'link remove-set', 'aria-label': `Remove replica set ${i}`,
      onclick: () => removeReplicaSet(i),
    }, 'Remove'),
    field(`plan.replicas[${i}].count`, `rs${i}-count`, 'Replicas', null, count, { cls: 'rs-count' }),
    mbField);
}

/** Sets a control only when its value differs (a write costs a style pass). */
function put(id, v) {
  const el = $(`#f-${id}`);
  if (el.type === 'checkbox') {
    if (el.checked !== !!v) el.checked = !!v;
  } else {
    const text = v === undefined || v === null ? '' : String(v);
    if (el.value !== text) el.value = text;
  }
}

/** Fills every group menu of the maps (when the groups or their names changed, or `force`). */
function refreshGroupOptions(force = false) {
  const info = groupInfo();
  const key = info.map((g) => g.gpu.split(' ')[0]).join('\n');
  const selects = $$('#stage-rows select, #replica-rows select');
  if (!force && key === layout.optionsKey && selects.every((s) => s.options.length)) return;
  layout.optionsKey = key;
  for (const s of selects) {
    const value = s.value;
    fill(s, info.map((g) => h('option', { value: g.index }, `${g.index} · ${g.gpu.split(' ')[0]}`)));
    if (value !== '' && Number(value) < info.length) s.value = value;
  }
}

/** Writes stage rows: [{group, layers}] (layers a number, 'auto', or undefined: kept). */
function setStageRows(list, rebuild) {
  if (rebuild) fill($('#stage-rows'), list.map((_, i) => stageRow(i)));
  refreshGroupOptions(rebuild);
  list.forEach((st, i) => {
    put(`st${i}-group`, st.group);
    if (st.layers === undefined) return;
    const auto = st.layers === 'auto';
    put(`st${i}-auto`, auto);
    $(`#f-st${i}-layers`).readOnly = auto;
    if (!auto) put(`st${i}-layers`, st.layers);
  });
}

/** Writes replica rows: [{group, count, micro_batches}] (undefined: kept). */
function setReplicaRows(list, rebuild) {
  if (rebuild) fill($('#replica-rows'), list.map((_, i) => replicaRow(i)));
  refreshGroupOptions(rebuild);
  list.forEach((r, i) => {
    put(`rs${i}-group`, r.group);
    if (r.count !== undefined) put(`rs${i}-count`, r.count);
    if (r.micro_batches === undefined) return;
    const auto = r.micro_batches === 'auto';
    put(`rs${i}-auto`, auto);
    $(`#f-rs${i}-mb`).readOnly = auto;
    if (!auto) put(`rs${i}-mb`, r.micro_batches);
  });
}

function replicaState() {
  return replicaRowEls().map((_, i) => ({
    group: Number($(`#f-rs${i}-group`).value),
    count: $(`#f-rs${i}-count`).value,
    micro_batches: $(`#f-rs${i}-auto`).checked ? 'auto' : $(`#f-rs${i}-mb`).value,
  }));
}

function addReplicaSet() {
  const list = replicaState();
  list.push({ group: Math.min(groupCount() - 1, list.length), count: 1, micro_batches: 'auto' });
  setReplicaRows(list, true);
  layout.manual.replicas = true;
  notify();
  $(`#f-rs${list.length - 1}-group`).focus();
}

function removeReplicaSet(i) {
  const list = replicaState();
  if (list.length < 2) return;
  list.splice(i, 1);
  setReplicaRows(list, true);
  layout.manual.replicas = true;
  notify();
  $('#add-replica-set').focus();
}

/** Places the stages or replica sets by GPU count again (and follows the cluster from now on). */
function placeByGpus(kind) {
  layout.manual[kind] = false;
  notify();
}

function setLayout(value) {
  layout.mode = value;
  if (value === 'stages' && !stageRowEls().length) layout.manual.stages = false;
  if (value === 'replicas' && !replicaRowEls().length) layout.manual.replicas = false;
}

function buildPlacement() {
  const choice = (value, text) => h('label', { class: 'choice', id: `layout-${value}` },
    h('input', { type: 'radio', name: 'layout-mode', value, id: `f-layout-${value}` }), h('span', null, text));
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
      h('p', { class: 'error', id: 'f-stages-error', role: 'alert', hidden: true }),
      h('div', { class: 'map-tools' },
        h('button', { type: 'button', id: 'all-auto', onclick: () => { stageRowEls().forEach((_, i) => { put(`st${i}-auto`, true); $(`#f-st${i}-layers`).readOnly = true; }); notify(); } }, 'Balance all layers'),
        h('button', { type: 'button', id: 'place-stages', onclick: () => placeByGpus('stages') }, 'Place by GPU count'))),
    h('div', { id: 'replica-map', class: 'field whole map', 'data-path': 'plan.replicas', 'data-label': 'the replica sets', hidden: true },
      h('div', { id: 'replica-rows', class: 'map-rows' }),
      h('p', { class: 'error', id: 'f-replicas-error', role: 'alert', hidden: true }),
      h('div', { class: 'map-tools' },
        h('button', { type: 'button', id: 'add-replica-set', onclick: addReplicaSet }, '+ Add a replica set'),
        h('button', { type: 'button', id: 'place-replicas', onclick: () => placeByGpus('replicas') }, 'Place by GPU count'))));

  // Placement controls, before the form's own listener (which re-estimates) sees the event.
  const onPlacement = (e) => {
    const t = e.target;
    if (t.name === 'layout-mode') {
      if (t.checked) setLayout(t.value);
      return;
    }
    const m = /^f-(st|rs)(\d+)-(group|count|auto)$/.exec(t.id);
    if (!m) return;
    if (m[3] === 'auto') $(`#f-${m[1]}${m[2]}-${m[1] === 'st' ? 'layers' : 'mb'}`).readOnly = t.checked;
    else layout.manual[m[1] === 'st' ? 'stages' : 'replicas'] = true;
  };
  $('#placement-fields').addEventListener('change', onPlacement);
  $('#placement-fields').addEventListener('input', onPlacement);
  // 'input' comes before 'change', and the form re-estimates on both: set the mode on the first.
  for (const type of ['input', 'change'])
    $('#f-uneven').addEventListener(type, () => setLayout($('#f-uneven').checked ? 'stages' : 'none'));
}

const formNum = (id) => Number($(`#f-${id}`).value);

/** What the page places by default: {stages: [group per stage] | null, replicas: [{group, count}] | null}. */
function placementDefaults(pp = formNum('pp')) {
  const info = groupInfo();
  const gpus = info.map((g) => g.gpus);
  const tp = formNum('tp');
  const cp = formNum('cp');
  const total = gpus.reduce((a, b) => a + b, 0);
  const dp = $('#f-dp-auto').checked ? derivedDp(total, tp, pp, cp) : formNum('dp');
  return {
    stages: defaultStageGroups(pp, gpus, tp * cp * dp),
    replicas: defaultReplicaSets(gpus, tp * pp * cp),
  };
}

/**
 * Keeps the placement in step with the form (runs before each read): the mode's visibility, the
 * stage rows (one per PP stage; placed again when PP changes), the default placement while the
 * user has not placed by hand, and the group menus' names.
 */
export function syncPlacement() {
  const n = groupCount();
  if (n > 1 && layout.mode === 'none') layout.mode = 'stages';
  const pp = formNum('pp');
  const ppOk = Number.isInteger(pp) && pp >= 1 && pp <= MAX_ROWS;
  if (ppOk && pp !== layout.pp) {
    layout.pp = pp;
    layout.manual.stages = false;
  }
  if (layout.mode === 'stages' && ppOk && !layout.manual.stages) {
    const want = placementDefaults(pp).stages;
    if (want) {
      const rebuild = stageRowEls().length !== want.length;
      setStageRows(want.map((group) => ({ group, layers: rebuild ? 'auto' : undefined })), rebuild);
    }
  }
  if (layout.mode === 'replicas' && !layout.manual.replicas) {
    const want = placementDefaults().replicas;
    if (want) {
      const rows = replicaRowEls();
      const rebuild = rows.length !== want.length;
      const kept = rebuild ? replicaState().map((r) => r.micro_batches) : [];
      setReplicaRows(want.map((w, i) => ({ ...w, micro_batches: rebuild ? (kept[i] ?? 'auto') : undefined })), rebuild);
    }
  }
  refreshGroupOptions();
  for (const row of [...stageRowEls(), ...replicaRowEls()]) {
    const color = groupColor(Number($('select', row).value));
    const sw = $('.swatch', row);
    if (sw.style.background !== color) sw.style.background = color;
  }

  const many = n > 1;
  const show = (el, on) => { if (el.hidden === on) el.hidden = !on; };
  show($('#placement-fieldset'), layout.mode !== 'none');
  show($('#stage-map'), layout.mode === 'stages');
  show($('#replica-map'), layout.mode === 'replicas');
  show($('#layout-none'), !many);
  show($('#layout-replicas'), many || layout.mode === 'replicas');
  show($('#uneven-field'), !many);
  show($('#group-0-head'), many);
  show($('#f-inter_group_link').closest('.field'), many);
  put('uneven', layout.mode !== 'none');
  const radio = $(`#f-layout-${layout.mode}`);
  if (radio && !radio.checked) radio.checked = true;
  setText($('#layout-stages span'), many ? 'Split the pipeline across groups' : 'Layers per stage (uneven split)');
  setText($('#layout-hint'), layout.mode === 'stages'
    ? (many ? 'Each pipeline stage runs on one group (TP × CP × DP GPUs of it); a stage boundary between groups ' +
      'crosses the link between the groups. “auto” balances layers by stage speed, within memory.'
      : '“auto” balances the layers by stage speed, within each stage\'s memory.')
    : layout.mode === 'replicas'
      ? 'Each replica is a whole pipeline (TP × PP × CP GPUs) on one group; the counts add up to DP. ' +
        '“auto” shares the micro-batches by replica speed; the gradient ring crosses the link between the groups.'
      : '');
}

/** Puts a scenario's plan.stages / plan.replicas into the maps (after its cluster and plan). */
function writePlacement(plan) {
  const n = groupCount();
  layout.pp = Number(plan.pp ?? 1);
  layout.optionsKey = '';
  const stages = Array.isArray(plan.stages) ? plan.stages : null;
  const replicas = Array.isArray(plan.replicas) ? plan.replicas : null;
  if (stages) setStageRows(stages.map((st) => ({ group: st.group ?? 0, layers: st.layers ?? 'auto' })), true);
  else fill($('#stage-rows'));
  if (replicas) {
    setReplicaRows(replicas.map((r) => ({ group: r.group ?? 0, count: r.count ?? 1, micro_batches: r.micro_batches ?? 'auto' })), true);
  } else {
    fill($('#replica-rows'));
  }
  layout.mode = stages ? 'stages' : replicas ? 'replicas' : n > 1 ? 'stages' : 'none';
  // Placed by hand unless it is what the page places by itself (then it keeps following the cluster).
  const want = placementDefaults(layout.pp);
  layout.manual.stages = !!stages && !(want.stages && want.stages.length === stages.length &&
    stages.every((st, i) => (st.group ?? 0) === want.stages[i]));
  layout.manual.replicas = !!replicas && !(want.replicas && want.replicas.length === replicas.length &&
    replicas.every((r, i) => (r.group ?? 0) === want.replicas[i].group && (r.count ?? 1) === want.replicas[i].count));
}

/** The balance the engine chose, shown in the "auto" fields (empty while no report matches). */
function showChosen(report) {
  const ok = report && !report.error;
  const stages = stageRowEls();
  const stagesOk = ok && layout.mode === 'stages' && report.stages.length === stages.length;
  stages.forEach((_, i) => {
    if ($(`#f-st${i}-auto`).checked) put(`st${i}-layers`, stagesOk ? report.stages[i].layers : '');
  });
  const sets = replicaRowEls();
  const setsOk = ok && layout.mode === 'replicas' && report.replicas?.length === sets.length &&
    report.replicas.every((r) => r.group >= 0);
  sets.forEach((_, i) => {
    if ($(`#f-rs${i}-auto`).checked) put(`rs${i}-mb`, setsOk ? report.replicas[i].micro_batches : '');
  });
}

/** The link between groups the engine takes by default: the slowest of their networks. */
function slowestNetwork() {
  let best = null;
  for (const g of draftGroups()) {
    const n = typeof g.node === 'string' ? byId(presets.nodes, g.node) : null;
    const id = n ? n.inter_node_link : typeof g.inter_node_link === 'string' ? g.inter_node_link : null;
    const l = id ? byId(presets.links, id) : null;
    if (l && (!best || l.busbw_GBps < best.busbw_GBps)) best = l;
  }
  return best;
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

/** GPUs in the cluster (all groups) as the form stands (NaN while a field is not a number). */
export function clusterGpus() {
  return groupInfo().reduce((a, g) => a + g.gpus, 0);
}

/** DP the engine derives when it is left out: the replica sets' counts, else GPUs / (tp pp cp). */
function formDerivedDp(gpus, tp, pp, cp) {
  if (layout.mode === 'replicas') {
    const counts = replicaRowEls().map((_, i) => Number($(`#f-rs${i}-count`).value));
    return counts.every((c) => Number.isInteger(c) && c > 0) ? Math.max(1, counts.reduce((a, b) => a + b, 0)) : NaN;
  }
  return derivedDp(gpus, tp, pp, cp);
}

/** The engine's rule for a left-out dp: GPUs / (tp pp cp), at least 1. */
export function derivedDp(gpus, tp, pp, cp) {
  const mp = tp * pp * cp;
  if (![gpus, mp].every((x) => Number.isInteger(x) && x > 0)) return NaN;
  return Math.max(1, Math.floor(gpus / mp));
}

/** The scenario the form describes: {scenario, errors} (errors: fields that are not numbers). */
export function readScenario() {
  syncPlacement();
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
  let first;
  if (mode('cluster-mode') === 'preset') {
    first = { node: r.select('node'), nodes: r.num('nodes', 'cluster.nodes') };
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
    first = {
      gpu,
      gpus_per_node: r.num('gpus_per_node', 'cluster.gpus_per_node'),
      nodes: r.num('nodes', 'cluster.nodes'),
      intra_node_link: linkOf('intra_node_link'),
      inter_node_link: linkOf('inter_node_link'),
      nics_per_node: r.num('nics_per_node', 'cluster.nics_per_node'),
    };
  }
  // One group: the cluster is that group (today's form); several: {groups, inter_group_link}.
  if (groupCount() === 1) {
    s.cluster = first;
  } else {
    const groups = [first];
    extraGroups().forEach((_, k) => {
      const i = k + 1;
      const node = r.select(`grp${i}-node`);
      const nodes = r.num(`grp${i}-nodes`, `cluster.groups[${i}].nodes`);
      groups.push(node === CUSTOM ? { ...carried.groups[i], nodes } : { node, nodes });
    });
    s.cluster = { groups };
    const link = r.select('inter_group_link');
    if (link) s.cluster.inter_group_link = link === CUSTOM_LINK ? carried.links.inter_group_link : link;
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
  if (layout.mode === 'stages') {
    plan.stages = stageRowEls().map((_, i) => ({
      group: Number(r.select(`st${i}-group`)),
      layers: r.check(`st${i}-auto`) ? 'auto' : r.num(`st${i}-layers`, `plan.stages[${i}].layers`),
    }));
  } else if (layout.mode === 'replicas') {
    plan.replicas = replicaRowEls().map((_, i) => ({
      group: Number(r.select(`rs${i}-group`)),
      count: r.num(`rs${i}-count`, `plan.replicas[${i}].count`),
      micro_batches: r.check(`rs${i}-auto`) ? 'auto' : r.num(`rs${i}-mb`, `plan.replicas[${i}].micro_batches`),
    }));
  }
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
  const groups = clusterGroups(s.cluster);
  const pick = (o, keep) => Object.fromEntries(Object.entries(o ?? {}).filter(([k]) => keep(k)));
  carried = {
    plan: pick(s.plan, (k) => !PLAN_KEYS.has(k)),
    // The name describes the scenario as it was written; it is not carried into edits of it.
    top: pick(s, (k) => !['model', 'cluster', 'plan', 'seq_len', 'name'].includes(k)),
    model: isObject(s.model) ? pick(s.model, (k) => ![...MODEL_INTS, 'name', 'seq_len', 'ffn_type', 'position',
      'norm', 'tied_embeddings', 'bias'].includes(k)) : {},
    gpu: {},
    links: {},
    groups: {},
  };
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

  writeGroup0(groups[0]);
  renderExtraGroups(groups.slice(1).map((g) => (typeof g.node === 'string' ? { node: g.node, nodes: g.nodes }
    : { custom: g, nodes: g.nodes })));
  const igl = $('#f-inter_group_link');
  for (const o of $$('option[data-scenario]', igl)) o.remove();
  const link = s.cluster?.inter_group_link;
  if (isObject(link)) {
    carried.links.inter_group_link = link;
    igl.append(h('option', { value: CUSTOM_LINK, 'data-scenario': '' }, `${link.name ?? 'custom link'} (custom, from the scenario)`));
    igl.value = CUSTOM_LINK;
  } else if (typeof link === 'string') {
    if (![...igl.options].some((o) => o.value === link))
      igl.append(h('option', { value: link, 'data-scenario': '' }, `${linkName(link)} (from the scenario)`));
    igl.value = link;
  } else {
    igl.value = '';
  }

  const plan = { ...PLAN_DEFAULTS, ...s.plan };
  for (const k of ['tp', 'pp', 'cp', 'vpp', 'micro_batch', 'global_batch', 'recompute', 'precision', 'zero_stage',
    'sequence_parallel', 'distributed_optimizer', ...ADVANCED]) setValue(k, plan[k]);
  // The engine's dp when left out: the replica sets' counts, or what the GPUs leave.
  const derived = Array.isArray(s.plan.replicas)
    ? s.plan.replicas.reduce((a, r) => a + (Number.isInteger(r?.count) ? r.count : 1), 0)
    : derivedDp(clusterGpus(), plan.tp, plan.pp, plan.cp);
  const auto = s.plan.dp === undefined || s.plan.dp === derived;
  $('#f-dp-auto').checked = auto;
  $('#f-dp').readOnly = auto;
  setValue('dp', auto ? derived : s.plan.dp);
  writePlacement(s.plan);
}

/**
 * Sets the plan's controls to a plan from the search (the engine's resolved plan: tp, pp, dp, cp,
 * vpp, micro_batch, global_batch, sequence_parallel, recompute, distributed_optimizer, zero_stage,
 * precision) and re-estimates. DP goes back to derived (the search derives it) and the layers to
 * an even split (it searches no uneven splits); the other options stay as they are, as the search
 * kept them. One group only: the search does not search clusters of several.
 */
export function applyPlan(p) {
  for (const k of ['tp', 'pp', 'cp', 'vpp', 'micro_batch', 'global_batch', 'sequence_parallel', 'recompute', 'precision'])
    setValue(k, p[k]);
  // The search keeps the scenario's ZeRO stage and turns the distributed optimizer (ZeRO-1) on
  // with DP × CP > 1: its zero_stage is the effective one (1 for the distributed optimizer).
  if (Number($('#f-zero_stage').value) >= 1 || p.zero_stage >= 2) setValue('zero_stage', p.zero_stage);
  else setValue('distributed_optimizer', p.zero_stage === 1);
  $('#f-dp-auto').checked = true;
  $('#f-dp').readOnly = true;
  if (groupCount() === 1) setLayout('none');
  notify();
}

/** Puts one group (a node preset and count, or an explicit group) into group 0's fields. */
function writeGroup0(group) {
  const pick = (o, keep) => Object.fromEntries(Object.entries(o ?? {}).filter(([k]) => keep(k)));
  carried.gpu = isObject(group.gpu) ? pick(group.gpu, (k) => !['name', 'arch', 'memory_gib', 'memory_bandwidth_GBps',
    'peak_tflops'].includes(k)) : {};
  for (const id of ['intra_node_link', 'inter_node_link']) {
    const select = $(`#f-${id}`);
    select.querySelector(`option[value="${CUSTOM_LINK}"]`)?.remove();
    delete carried.links[id];
    if (isObject(group[id])) {
      carried.links[id] = group[id];
      select.append(h('option', { value: CUSTOM_LINK }, `${group[id].name ?? 'custom link'} (custom, from the scenario)`));
    }
  }
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
}

// ---------------------------------------------------------------------------------------------
// Hints and errors next to the controls

/** Sets text only when it changes (a write, even of the same text, costs a style pass). */
function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

/** Updates the derived values shown beside the inputs (cheap; runs on every change). */
export function refreshHints(report) {
  const info = groupInfo();
  const gpus = info.reduce((a, g) => a + g.gpus, 0);
  const tp = Number($('#f-tp').value), pp = Number($('#f-pp').value), cp = Number($('#f-cp').value);
  const auto = $('#f-dp-auto').checked;
  const dpHint = $('#f-dp-hint');
  const sets = layout.mode === 'replicas';
  if (auto) {
    const d = formDerivedDp(gpus, tp, pp, cp);
    if ($('#f-dp').value !== String(Number.isFinite(d) ? d : '')) setValue('dp', Number.isFinite(d) ? d : '');
    setText(dpHint, sets ? 'derived: the replica sets\' counts added up'
      : Number.isFinite(d) ? `derived: ${gpus.toLocaleString('en-US')} GPUs ÷ (TP ${tp} × PP ${pp} × CP ${cp})`
        : 'derived from the GPU count');
  } else {
    setText(dpHint, sets ? 'set by you: the replica sets\' counts must add up to DP'
      : 'set by you: TP × PP × CP × DP must equal the GPUs');
  }
  const many = info.length > 1;
  const all = Number.isFinite(gpus) ? `${gpus.toLocaleString('en-US')} GPUs in all` : '';
  setText($('#f-nodes-hint'), many && Number.isFinite(info[0].gpus)
    ? `${info[0].gpus.toLocaleString('en-US')} GPUs in this group · ${all}` : all);
  if (mode('cluster-mode') === 'preset') setText($('#f-node-hint'), nodeCard(byId(presets.nodes, $('#f-node').value)));
  if (many) {
    for (const g of info) {
      setText($(`#group-${g.index}-title`), Number.isFinite(g.gpus) ? `${g.gpus.toLocaleString('en-US')} × ${g.gpu}` : g.gpu);
      if (g.index > 0) {
        const node = $(`#f-grp${g.index}-node`).value;
        setText($(`#f-grp${g.index}-node-hint`), node === CUSTOM ? 'an explicit group from the scenario' : nodeCard(byId(presets.nodes, node)));
      }
    }
    const slowest = slowestNetwork();
    setText($('#f-inter_group_link-hint'), $('#f-inter_group_link').value === '' && slowest
      ? `here: ${slowest.name}` : 'stage boundaries between groups and the gradient ring cross it');
  }
  showChosen(report);
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
  // Group 0 of a cluster of groups is the cluster form itself.
  if (path.startsWith('cluster.groups[0].')) path = `cluster.${path.slice('cluster.groups[0].'.length)}`;
  let best = null;
  for (const el of $$('[data-path]')) {
    const p = el.dataset.path;
    if ((path === p || path.startsWith(p + '.') || path.startsWith(p + '[')) && el.offsetParent !== null &&
      (!best || p.length > best.dataset.path.length)) best = el;
  }
  return best;
}

/** A field's own error line (a map or a group holds fields with their own). */
const ownError = (el) => el.querySelector(':scope > .error');

export function clearErrors() {
  for (const el of $$('.field.invalid')) {
    el.classList.remove('invalid');
    const err = ownError(el);
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
  const err = ownError(el);
  err.textContent = message;
  err.hidden = false;
  // A whole map or group: the message is its own; no one control is wrong.
  const control = el.classList.contains('whole') ? null : $('input:not([type=checkbox]), select', el) ?? $('input', el);
  if (control) {
    control.setAttribute('aria-invalid', 'true');
    const ids = new Set((control.getAttribute('aria-describedby') ?? '').split(' ').filter(Boolean));
    ids.add(err.id);
    control.setAttribute('aria-describedby', [...ids].join(' '));
  }
  return true;
}
