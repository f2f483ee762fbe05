// The cluster: group 0 is the cluster form (a node preset and a count, or custom nodes: a GPU preset
// or a custom GPU, GPUs and NICs per node, the links); more groups are a node preset (or an
// explicit group from the scenario) and a count each, with the link between the groups. Fields
// for scenario keys are built from the schema; the engine's values (NICs per node, the link
// between the groups, GPU counts) come from resolve().
import { $, $$, fill, h } from '../ui/dom.js';
import { clusterGroups, describeGroups, groupColor } from '../scenario/groups.js';
import { key, keysOf, rule } from '../scenario/schema.js';
import { tip } from '../ui/tooltip.js';
import { on, onClick } from './bind.js';
import { field, isNumberBox, keyField, numberInput, put, radios, readNumber, setText, show } from './fields.js';
import { edit, groupPath, groups, markLocal, plan, state } from './state.js';

const CUSTOM = '__custom__';
const CARRIED = '__carried__'; // an object from the scenario (a link, an explicit group) the menus cannot name

let presets;
let nodeOptions = null; // the node presets' <optgroup>s, cloned into each group's menu
const byId = (list, id) => list.find((x) => x.id === id);
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const linkName = (id) => byId(presets.links, id)?.name ?? id;
const many = () => groups().length > 1;
const group0 = () => groups()[0];
const integer = (x) => x.toLocaleString('en-US');

function nodeLabel(n) {
  const gpu = byId(presets.gpus, n.gpu);
  return `${n.name.replace(/\s*\(.*\)$/, '')} · ${n.gpus_per_node} × ${gpu ? gpu.name.replace(/^(NVIDIA|AMD|Intel|Huawei) /, '') : n.gpu}`;
}

function nodeCard(n) {
  if (!n) return '';
  const gpu = byId(presets.gpus, n.gpu);
  return `${n.gpus_per_node} × ${gpu?.name ?? n.gpu} (${gpu?.memory_gib ?? '?'} GiB) per node · ` +
    `${linkName(n.intra_node_link)} inside · ${n.nics_per_node} × ${linkName(n.inter_node_link)} between nodes`;
}

/** Replaces group `i` (group 0 of one group is the cluster itself). */
function setGroup(i, g) {
  if (many()) state.scenario.cluster.groups[i] = g;
  else state.scenario.cluster = g;
}

/** A layout (stages, replicas) says where work runs on the groups: a change of groups drops it. */
function dropLayouts() {
  const p = plan();
  delete p.stages;
  delete p.replicas;
  state.stash.stages = undefined;
  state.stash.replicas = undefined;
}

// Menus that may hold an object from the scenario: the chosen option carries it.
function chosen(select) {
  const o = select.selectedOptions[0];
  return o?.carried ?? o?.value;
}

/**
 * Makes `select` show `value`: a preset id, or an object (an option "… (custom, from the
 * scenario)", kept while the scenario is on show, so that it can be chosen again).
 */
function showChoice(select, value, carriedLabel) {
  if (isObject(value)) {
    let extra = select.querySelector(`option[value="${CARRIED}"]`);
    if (!extra) select.append(extra = h('option', { value: CARRIED }));
    extra.carried = value;
    setText(extra, carriedLabel(value));
    if (select.value !== CARRIED) select.value = CARRIED;
    return;
  }
  const text = value === undefined || value === null ? '' : String(value);
  if (text && ![...select.options].some((o) => o.value === text)) {
    select.append(h('option', { value: text, 'data-scenario': '' }, `${linkName(text)} (from the scenario)`));
  }
  if (select.value !== text) select.value = text;
}

const customLink = (l) => `${l.name ?? 'custom link'} (custom, from the scenario)`;

// Group 0 ---------------------------------------------------------------------------------------

function setMode(mode) {
  const g = group0();
  if (mode === 'custom' && g.node !== undefined) {
    const n = byId(presets.nodes, g.node) ?? presets.nodes[0];
    state.stash.node = g.node;
    const out = { gpu: n.gpu, gpus_per_node: n.gpus_per_node };
    // Every key of the node the engine reads: the host link too, which has no field (an
    // offloading plan was refused on the copy, its link to host memory not stated).
    for (const k of ['nics_per_node', 'intra_node_link', 'inter_node_link', 'host_link_GBps_per_dir']) if (n[k] !== undefined) out[k] = n[k];
    setGroup(0, { ...out, nodes: g.nodes });
  } else if (mode === 'preset' && g.node === undefined) {
    setGroup(0, { node: state.stash.node ?? presets.nodes[0].id, nodes: g.nodes });
  }
  state.lastChanged = groupPath(0, 'node');
}

/**
 * A custom GPU starting from a preset, named "… (custom)": every key the engine reads, those the
 * page has no field for too (the SM count its GEMM tiles run on, the measured GEMM rates): a copy
 * estimates as the preset does until a field changes (with only the fields' keys, the H100's copy
 * made the default plan 2.6 % faster). Its documentation (source, notes) stays with the preset.
 */
function copyOfGpu(id) {
  const g = byId(presets.gpus, id) ?? presets.gpus[0];
  const out = structuredClone(g);
  for (const k of ['id', 'source', 'notes']) delete out[k]; // (its confidence stays: a low one warns)
  out.name = `${g.name} (custom)`;
  return out;
}

/**
 * Each precision's measured GEMM rate as a share of its peak, per custom GPU (taken before its
 * first peak changes, so that typing a number digit by digit keeps it). A peak typed over a
 * copy's scales its measured rate with it: a derated or faster copy of a chip reaches the share
 * of its peak the chip does (the engine caps a measured rate at the peak only, and without one
 * takes the presets' median share).
 */
const peakShares = new WeakMap();

function bindPeak(el, precision) {
  return on(el, () => {
    const path = groupPath(0, `gpu.peak_tflops.${precision}`);
    const r = readNumber(el, { optional: true });
    markLocal(el, path, r.message);
    if (r.message) return;
    const gpu = group0().gpu;
    if (isObject(gpu) && !peakShares.has(gpu)) {
      peakShares.set(gpu, Object.fromEntries(Object.entries(gpu.measured?.gemm_tflops ?? {})
        .filter(([p, v]) => v > 0 && gpu.peak_tflops?.[p] > 0).map(([p, v]) => [p, v / gpu.peak_tflops[p]])));
    }
    const share = isObject(gpu) ? peakShares.get(gpu)[precision] : undefined;
    edit(path, r.empty ? undefined : r.value);
    if (share !== undefined) edit(groupPath(0, `gpu.measured.gemm_tflops.${precision}`), r.empty ? undefined : r.value * share);
  });
}

/** A number box bound to a key of group 0 (`name`: "nodes", "gpu.memory_gib", ...). */
function bindNumber(el, name, optional = false) {
  return on(el, () => {
    const path = groupPath(0, name);
    const r = readNumber(el, { optional });
    markLocal(el, path, r.message);
    if (!r.message) edit(path, r.empty ? undefined : r.value);
  });
}

function gpuFields() {
  const arches = [...new Set(presets.gpus.map((g) => g.arch))].sort();
  const out = [];
  for (const k of keysOf('gpu')) {
    if (k.control !== 'cluster') continue;
    if (k.type === 'object') {
      const peaks = keysOf(`gpu.${k.name}`).filter((s) => s.control === 'cluster');
      peaks.forEach((s, i) => {
        const f = keyField(s, `cluster.gpu.${k.name}.${s.name}`, `g-peak-${s.name}`,
          { hint: i === 0 ? 'dense; leave empty if absent' : undefined });
        if (k.name === 'peak_tflops') bindPeak($('input', f), s.name);
        else bindNumber($('input', f), `gpu.${k.name}.${s.name}`, true);
        out.push(f);
      });
      continue;
    }
    // The architecture selects the calibration constants: the families the presets know.
    const control = k.name === 'arch' ? h('select', { id: 'f-g-arch', name: 'g-arch' }, arches.map((a) => h('option', { value: a }, a))) : undefined;
    const f = keyField(k, `cluster.gpu.${k.name}`, `g-${k.name}`, { control });
    const el = $(`#f-g-${k.name}`, f);
    if (isNumberBox(el)) bindNumber(el, `gpu.${k.name}`, k.default === null);
    else on(el, () => edit(groupPath(0, `gpu.${k.name}`), el.value.trim() === '' ? undefined : el.value.trim()));
    out.push(f);
  }
  return out;
}

// More groups ---------------------------------------------------------------------------------

function removeButton(i) {
  return onClick(h('button', { type: 'button', class: 'link remove-group', 'aria-label': `Remove group ${i}` }, 'Remove'),
    () => removeGroup(i), () => $('#add-group').focus());
}

function groupCard(i) {
  const select = h('select', { id: `f-grp${i}-node`, name: `grp${i}-node` },
    [...nodeOptions.children].map((o) => o.cloneNode(true)));
  on(select, (el) => {
    const g = groups()[i];
    const v = chosen(el);
    state.scenario.cluster.groups[i] = isObject(v) ? { ...v, nodes: g.nodes } : { node: v, nodes: g.nodes };
    state.lastChanged = `cluster.groups[${i}].node`;
  });
  const nodes = on(numberInput(`grp${i}-nodes`), (el) => {
    const path = `cluster.groups[${i}].nodes`;
    const r = readNumber(el);
    markLocal(el, path, r.message);
    if (!r.message) edit(path, r.value);
  });
  const k = key('cluster.nodes');
  return h('div', { class: 'group-card field whole', 'data-group': i, 'data-path': `cluster.groups[${i}]`, 'data-label': `group ${i}` },
    h('div', { class: 'group-head' },
      h('span', { class: 'swatch', style: { background: groupColor(i) } }),
      h('strong', null, `Group ${i}`), h('span', { class: 'hint', id: `group-${i}-title` }),
      removeButton(i)),
    h('div', null,
      field(`cluster.groups[${i}].node`, `grp${i}-node`, key('cluster.node')?.label ?? 'Node', null, select, { hint: '' }),
      field(`cluster.groups[${i}].nodes`, `grp${i}-nodes`, k?.label ?? 'Nodes', null, nodes, { unit: k?.unit || undefined, hint: '' })),
    h('p', { class: 'error', id: `group-${i}-error`, role: 'alert', hidden: true }));
}

// The node a new group gets: a common one the cluster does not have yet, wide enough for TP.
const NEW_GROUP_NODES = ['dgx-h100', 'dgx-a100', 'hgx-h200', 'dgx-b200', 'mi300x-x8'];
const gcd = (a, b) => (b ? gcd(b, a % b) : a);

/**
 * A group added to a cluster must be usable at once, or the estimate breaks on the first click
 * (the engine refuses a group the plan leaves empty). The one layout every plan allows is whole
 * replicas per group (TP and PP stay inside a group, as Megatron needs), so the new group gets
 * the fewest nodes that hold whole replicas of tp·pp·cp GPUs, and every group becomes a replica
 * set with micro-batches in proportion to its speed. When a group already there cannot hold whole
 * replicas, the groups are added as written and the note beside the button says what to do.
 */
function addGroup() {
  const list = groups();
  // The form's own values: the engine's answer may still be for the cluster before the last edit
  // (it fills in only what the form leaves out).
  const p = { ...state.resolved?.scenario?.plan, ...plan() };
  const tp = p.tp ?? 1;
  const perReplica = tp * (p.pp ?? 1) * (p.cp ?? 1);
  const used = new Set(list.map((g) => g.node));
  const wide = (n) => n && n.gpus_per_node >= tp && n.gpus_per_node % tp === 0;
  const node = NEW_GROUP_NODES.map((id) => byId(presets.nodes, id)).find((n) => wide(n) && !used.has(n.id))
    ?? presets.nodes.find(wide) ?? presets.nodes[0];
  const nodes = perReplica / gcd(perReplica, node.gpus_per_node);
  const c = state.scenario.cluster;
  const added = { node: node.id, nodes };
  state.scenario.cluster = Array.isArray(c.groups) ? { ...c, groups: [...c.groups, added] } : { groups: [c, added] };
  dropLayouts();
  const gpus = [...describeGroups(c, presets).map((g) => g.nodes * g.gpusPerNode), nodes * node.gpus_per_node];
  const whole = gpus.every((n) => Number.isInteger(n / perReplica) && n >= perReplica);
  if (whole) {
    const q = plan();
    q.replicas = gpus.map((n, group) => ({ group, count: n / perReplica, micro_batches: 'auto' }));
    delete q.dp; // the replica sets' counts add up to it
  }
  const note = $('#add-group-note');
  if (note) {
    note.textContent = whole
      ? `Added ${nodes} × ${node.name.replace(/\s*\(.*\)$/, '')}: ${gpus[gpus.length - 1] / perReplica} more ` +
        `replica${gpus[gpus.length - 1] / perReplica === 1 ? '' : 's'} of ${perReplica} GPUs (TP ${tp} × PP ${p.pp ?? 1}` +
        `${(p.cp ?? 1) > 1 ? ` × CP ${p.cp}` : ''}), each group a replica set (Placement below).`
      : `Added ${nodes} × ${node.name.replace(/\s*\(.*\)$/, '')}. Some group does not hold whole replicas of ` +
        `${perReplica} GPUs: set its nodes, or place pipeline stages on the groups (Placement below).`;
    note.hidden = false;
  }
  state.lastChanged = 'cluster.groups';
}

function removeGroup(i) {
  const list = groups();
  if (list.length < 2) return;
  const rest = list.filter((_, k) => k !== i);
  state.scenario.cluster = rest.length === 1 ? rest[0] : { ...state.scenario.cluster, groups: rest };
  dropLayouts();
  state.lastChanged = 'cluster.groups';
}

/** Builds the cluster's fields into #cluster-fields. */
export function build(thePresets) {
  presets = thePresets;
  const vendors = [...new Set(presets.gpus.map((g) => g.vendor))];
  const gpuOptions = vendors.map((v) => h('optgroup', { label: v },
    presets.gpus.filter((g) => g.vendor === v).map((g) => h('option', { value: g.id }, `${g.name} (${g.memory_gib} GiB)`))));
  const nodeGroups = vendors.map((v) => {
    const nodes = presets.nodes.filter((n) => byId(presets.gpus, n.gpu)?.vendor === v);
    return nodes.length ? h('optgroup', { label: v }, nodes.map((n) => h('option', { value: n.id }, nodeLabel(n)))) : null;
  });
  nodeOptions = h('select', null, nodeGroups.map((o) => o?.cloneNode(true)));
  const linkOptions = (scope) => presets.links.filter((l) => l.scope === scope).map((l) => h('option', { value: l.id }, l.name));
  const k = (name) => key(`cluster.${name}`);

  const modes = radios('cluster-mode', 'Cluster source', [['preset', 'Node preset'], ['custom', 'Custom']]);
  for (const r of modes.querySelectorAll('input')) on(r, (el) => { if (el.checked) setMode(el.value); });
  const node = on(h('select', { id: 'f-node', name: 'node' }, nodeGroups), (el) => edit(groupPath(0, 'node'), el.value));
  const gpu = on(h('select', { id: 'f-gpu', name: 'gpu' }, gpuOptions, h('option', { value: CUSTOM }, 'Custom GPU…')), (el) => {
    const path = groupPath(0, 'gpu');
    const now = group0().gpu;
    if (el.value !== CUSTOM) edit(path, el.value);
    else if (!isObject(now)) edit(path, copyOfGpu(now));
  });
  const linkSelect = (name) => on(h('select', { id: `f-${name}`, name }, linkOptions(name === 'intra_node_link' ? 'intra_node' : 'inter_node')),
    (el) => edit(groupPath(0, name), chosen(el)));
  const numberField = (name) => {
    const f = keyField(k(name), `cluster.${name}`, name, { hint: name === 'nodes' ? '' : undefined });
    bindNumber($('input', f), name, name === 'nics_per_node');
    return f;
  };
  const igl = on(h('select', { id: 'f-inter_group_link', name: 'inter_group_link' },
    h('option', { value: '' }, `${rule('cluster.inter_group_link') || 'the engine\'s choice'} (default)`),
    linkOptions('inter_node')), (el) => edit('cluster.inter_group_link', chosen(el) || undefined));

  fill($('#cluster-fields'),
    h('div', { id: 'group-0-head', class: 'group-head', hidden: true },
      h('span', { class: 'swatch', style: { background: groupColor(0) } }),
      h('strong', null, 'Group 0'), h('span', { class: 'hint', id: 'group-0-title' }),
      removeButton(0)),
    modes,
    h('div', { id: 'cluster-preset', class: 'panel' },
      keyField(k('node'), 'cluster.node', 'node', { control: node, hint: '' })),
    h('div', { id: 'cluster-custom', class: 'panel grid', hidden: true },
      keyField(k('gpu'), 'cluster.gpu', 'gpu', { control: gpu, term: null, cls: 'wide' }),
      h('div', { id: 'gpu-custom', class: 'panel grid sub wide', hidden: true }, gpuFields()),
      numberField('gpus_per_node'),
      numberField('nics_per_node'),
      keyField(k('intra_node_link'), 'cluster.intra_node_link', 'intra_node_link', { control: linkSelect('intra_node_link'), cls: 'wide' }),
      keyField(k('inter_node_link'), 'cluster.inter_node_link', 'inter_node_link', { control: linkSelect('inter_node_link'), cls: 'wide' })),
    numberField('nodes'),
    h('div', { id: 'extra-groups', class: 'groups' }),
    h('div', { class: 'group-tools' },
      onClick(h('button', { type: 'button', id: 'add-group' }, '+ Add a group of other nodes'), addGroup,
        () => $(`#f-grp${groups().length - 1}-node`)?.focus()),
      tip(null, 'groups of nodes', k('groups')?.doc),
      h('p', { class: 'hint', id: 'add-group-note', role: 'status', hidden: true })),
    keyField(k('inter_group_link'), 'cluster.inter_group_link', 'inter_group_link', { control: igl, cls: 'igl', hint: '' }));
  $('#f-inter_group_link').closest('.field').hidden = true;
}

/** Each group's name, GPU and GPU count (the engine's, once resolved). */
export const groupInfo = () => describeGroups(state.scenario.cluster, presets, state.resolved?.groups);

/**
 * The GPU id of each group: the engine's (resolve()'s groups), else as the cluster is written (a
 * preset node's GPU, a GPU preset's id; null for a custom GPU): a plan the engine refuses leaves
 * no resolved groups, and the cluster still has its GPU (nccl-tests output of another GPU was
 * taken then, issue 37 item 6).
 */
export function groupGpus() {
  if (state.resolved?.groups?.length) return state.resolved.groups.map((g) => g.gpu);
  return clusterGroups(state.scenario.cluster).map((g) => (typeof g?.node === 'string' ? byId(presets.nodes, g.node)?.gpu
    : typeof g?.gpu === 'string' ? g.gpu : null) ?? null);
}

/** Shows the scenario's cluster, with the engine's values of the keys it leaves out. */
export function render() {
  const list = groups();
  const g = group0();
  const resolved = state.resolved;
  const preset = g.node !== undefined;
  $('#f-cluster-mode-preset').checked = preset;
  $('#f-cluster-mode-custom').checked = !preset;
  show($('#cluster-preset'), preset);
  show($('#cluster-custom'), !preset);
  const local = (el) => state.local.has(el);
  if (!local($('#f-nodes'))) put($('#f-nodes'), g.nodes);
  if (preset) {
    put($('#f-node'), g.node);
    setText($('#f-node-hint'), nodeCard(byId(presets.nodes, g.node)));
  } else {
    const custom = isObject(g.gpu);
    put($('#f-gpu'), custom ? CUSTOM : g.gpu);
    show($('#gpu-custom'), custom);
    if (custom) {
      for (const el of $$('#gpu-custom input, #gpu-custom select')) {
        if (local(el)) continue;
        const path = el.closest('.field').dataset.path.slice('cluster.gpu.'.length);
        const v = path.split('.').reduce((o, p) => o?.[p], g.gpu);
        if (el.type === 'text') {
          put(el, v ?? '');
        } else if (el.tagName === 'SELECT') {
          if (v !== undefined && ![...el.options].some((o) => o.value === v)) el.append(h('option', { value: v }, v));
          put(el, v ?? key('gpu.arch')?.default);
        } else {
          put(el, v);
        }
      }
    }
    if (!local($('#f-gpus_per_node'))) put($('#f-gpus_per_node'), g.gpus_per_node);
    if (!local($('#f-nics_per_node'))) put($('#f-nics_per_node'), g.nics_per_node ?? resolved?.groups[0]?.nics_per_node);
    for (const name of ['intra_node_link', 'inter_node_link']) showChoice($(`#f-${name}`), g[name], customLink);
  }
  renderGroups(list);
  const info = groupInfo();
  const total = resolved ? `${integer(resolved.gpus)} GPUs in all` : '';
  setText($('#f-nodes-hint'), many() && resolved ? `${integer(info[0].gpus)} GPUs in this group · ${total}` : total);
}

function renderGroups(list) {
  const cards = $$('#extra-groups .group-card');
  if (cards.length !== list.length - 1) fill($('#extra-groups'), list.slice(1).map((_, k) => groupCard(k + 1)));
  const isMany = list.length > 1;
  show($('#group-0-head'), isMany);
  show($('#f-inter_group_link').closest('.field'), isMany);
  if (!isMany) return;
  const info = groupInfo();
  for (const gi of info) {
    setText($(`#group-${gi.index}-title`), Number.isFinite(gi.gpus) ? `${integer(gi.gpus)} × ${gi.gpu}` : gi.gpu);
    if (gi.index === 0) continue;
    const g = list[gi.index];
    const select = $(`#f-grp${gi.index}-node`);
    if (typeof g.node === 'string') showChoice(select, g.node);
    else showChoice(select, omitNodes(g), () => `${Number.isFinite(gi.gpusPerNode) ? gi.gpusPerNode : '?'} × ${gi.gpu} nodes (custom, from the scenario)`);
    const nodes = $(`#f-grp${gi.index}-nodes`);
    if (!state.local.has(nodes)) put(nodes, g.nodes);
    setText($(`#f-grp${gi.index}-node-hint`), typeof g.node === 'string' ? nodeCard(byId(presets.nodes, g.node))
      : 'an explicit group from the scenario');
  }
  const c = state.scenario.cluster;
  showChoice($('#f-inter_group_link'), c.inter_group_link ?? '', customLink);
  const chosenLink = state.resolved?.scenario.cluster.inter_group_link;
  setText($('#f-inter_group_link-hint'), c.inter_group_link === undefined && typeof chosenLink === 'string'
    ? `here: ${linkName(chosenLink)}` : 'stage boundaries between groups and the gradient ring cross it');
}

const omitNodes = (g) => Object.fromEntries(Object.entries(g).filter(([k]) => k !== 'nodes'));

/** Forgets the objects a previous scenario's menus carried (a new scenario is on show). */
export function forget() {
  for (const o of $$(`#cluster-fields option[value="${CARRIED}"], #cluster-fields option[data-scenario]`)) o.remove();
}
