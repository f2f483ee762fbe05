// Compare plans side by side. "Pin" keeps the plan on show; change the plan and the table shows the
// pinned plans (up to four) and the one on show in columns: iteration time, throughput, MFU,
// memory of each stage, where the step goes, and the plan itself, each value that differs from the
// first column marked with its change. The pins travel in the address, after the plan's fragment
// (#compare=, each the fragment of the engine's link of its plan: addressWith), so a comparison is
// shared by link and survives a reload; each pinned plan is estimated again by the engine when
// opened from one.
import { $, fill, h } from '../ui/dom.js';
import * as engine from '../engine/bridge.js';
import { duration, gib, integer, percent, rate } from '../ui/format.js';
import { labelOf, plainProblem } from '../ui/plain.js';
import { planName } from '../scenario/label.js';
import { parts as reportParts } from './parts.js';
import { fullestStage } from './stages.js';

export const MAX_PINS = 4;
const PARAM = 'compare';

/** [{fragment, scenario, report}] in pinning order. */
let pins = [];
let current = null; // {fragment, scenario, report} of the plan on show (null while it is invalid)
let opening = []; // the fragments of the address's pins while they open: the address keeps them
let lastReport = null; // the last report shown (a valid plan's)
let presets = null;
let changed = () => {};

const byId = (list, id) => list?.find((x) => x.id === id);

/** "Llama 3 70B · 64 × H100 SXM5 80GB": what a plan runs, for a column head. */
function what(r, scenario) {
  const model = typeof scenario.model === 'string' ? byId(presets?.models, scenario.model)?.name ?? scenario.model
    : scenario.model?.name ?? 'custom model';
  const ids = [...new Set(r.stages.map((st) => st.gpu))];
  const name = ids.length === 1 ? byId(presets?.gpus, ids[0])?.name ?? ids[0] : null;
  const gpu = name ? String(name).replace(/^(NVIDIA|AMD|Intel|Huawei) /, '') : null;
  return `${model} · ${integer(r.gpus ?? NaN)}${gpu ? ` × ${gpu}` : ' GPUs'}`;
}

// Rows: [label, value(report) -> number | string, format, better: 'lower' | 'higher' | null].
const HEADLINE = [
  ['Iteration time', (r) => r.iteration_time_s, duration, 'lower'],
  ['Throughput', (r) => r.tokens_per_s, (x) => rate(x, 'tokens/s'), 'higher'],
  ['MFU', (r) => r.mfu, (x) => percent(x), 'higher'],
  ['Memory of the fullest stage', (r) => fullestStage(r).memory_bytes.total, (x) => gib(x), 'lower'],
  ['Fits in memory', (r) => (r.fits ? 'yes' : 'no'), String, null],
];
// The plan's keys compared, labelled as the engine's schema labels them.
const PLAN_KEYS = ['tp', 'pp', 'dp', 'cp', 'vpp', 'ep', 'micro_batch', 'global_batch', 'recompute',
  'sequence_parallel', 'distributed_optimizer', 'precision'];

/** The rows of the table for `columns` (reports): headline, memory per stage, breakdown, plan. */
function rows(columns) {
  const out = HEADLINE.map(([label, value, format, better]) => ({ label, value, format, better }));
  const stages = Math.max(...columns.map((r) => r.stages.length));
  if (stages > 1 && stages <= 16) {
    for (let i = 0; i < stages; i++) {
      out.push({ label: `Memory, stage ${i}`, value: (r) => r.stages[i]?.memory_bytes.total ?? NaN, format: (x) => gib(x), better: 'lower', group: 'memory' });
    }
  }
  for (const [key, label] of reportParts()) {
    if (columns.some((r) => (r.breakdown_s?.[key] ?? 0) > 0))
      out.push({ label, value: (r) => r.breakdown_s?.[key] ?? 0, format: duration, better: 'lower', group: 'breakdown' });
  }
  for (const key of PLAN_KEYS) {
    if (columns.some((r) => r.plan?.[key] !== undefined))
      out.push({ label: labelOf(`plan.${key}`), value: (r) => r.plan?.[key] ?? '', format: (x) => (typeof x === 'boolean' ? (x ? 'on' : 'off') : String(x)), better: null, group: 'plan' });
  }
  return out;
}

/** The change of `x` from the first column's `base`, as a cell's note and its sense. */
function change(x, base, better) {
  if (typeof x !== 'number' || typeof base !== 'number') return x === base ? null : { text: 'differs', sense: '' };
  if (!Number.isFinite(x) || !Number.isFinite(base) || base === 0) return x === base ? null : { text: 'differs', sense: '' };
  const rel = x / base - 1;
  if (Math.abs(rel) < 0.005) return null;
  const sense = !better ? '' : (rel < 0) === (better === 'lower') ? 'better' : 'worse';
  return { text: `${rel > 0 ? '+' : '−'}${Math.abs(rel * 100).toFixed(Math.abs(rel) < 0.1 ? 1 : 0)} %`, sense };
}

function columnsOnShow() {
  const cols = pins.map((p, i) => ({ ...p, name: `Pinned ${i + 1}`, pinned: i }));
  if (current && !pins.some((p) => p.fragment === current.fragment)) cols.push({ ...current, name: 'On show', pinned: -1 });
  return cols;
}

function render() {
  const card = $('#compare-card');
  const pinButton = $('#pin-plan');
  const full = pins.length >= MAX_PINS;
  const pinned = current && pins.some((p) => p.fragment === current.fragment);
  pinButton.disabled = !current || full || pinned;
  pinButton.textContent = pinned ? 'Pinned' : 'Pin to compare';
  pinButton.title = full ? `At most ${MAX_PINS} pinned plans: unpin one first.` : !current ? 'An invalid plan cannot be pinned.' : '';
  card.hidden = pins.length === 0;
  if (!pins.length) return;
  const cols = columnsOnShow();
  const reports = cols.map((c) => c.report);
  const head = h('tr', null, h('th', { scope: 'col' }, 'Plan'), cols.map((c) => h('th', { scope: 'col', class: c.pinned < 0 ? 'on-show' : '' },
    h('span', { class: 'cmp-name' }, c.name), h('span', { class: 'cmp-plan' }, planName(c.report.plan)),
    h('span', { class: 'hint cmp-what' }, what(c.report, c.scenario)),
    c.pinned >= 0 ? h('span', { class: 'cmp-tools' },
      h('a', { href: `#${c.fragment}`, class: 'cmp-show' }, 'Show'), ' ',
      h('button', { type: 'button', class: 'link cmp-unpin', 'aria-label': `Unpin ${c.name}`, onclick: () => unpin(c.pinned) }, 'Unpin'))
      : null)));
  const body = [];
  let group = null;
  for (const row of rows(reports)) {
    if (row.group && row.group !== group) {
      group = row.group;
      body.push(h('tr', { class: 'cmp-group' }, h('th', { colspan: cols.length + 1, scope: 'colgroup' },
        { memory: 'Memory per GPU, by stage', breakdown: 'Where the step goes (critical path)', plan: 'The plan' }[group])));
    }
    const base = row.value(reports[0]);
    body.push(h('tr', null, h('th', { scope: 'row' }, row.label), reports.map((r, i) => {
      const x = row.value(r);
      const d = i === 0 ? null : change(x, base, row.better);
      return h('td', { class: d ? `diff ${d.sense}` : '', 'data-value': String(x), 'data-on-show': cols[i].pinned < 0 ? '' : null },
        typeof x === 'number' && !Number.isFinite(x) ? '–' : row.format(x), d && d.text !== 'differs' ? h('span', { class: 'delta' }, ` ${d.text}`) : null);
    })));
  }
  fill($('#compare'), h('div', { class: 'table-scroll', tabindex: '0', role: 'region', 'aria-label': 'Comparison table' }, h('table', { class: 'compare-table' },
    h('caption', { class: 'hint' }, 'Each value compared with the first column: ', h('span', { class: 'diff better' }, 'better'), ', ',
      h('span', { class: 'diff worse' }, 'worse'), ', or ', h('span', { class: 'diff' }, 'different'), '.'),
    h('thead', null, head), h('tbody', null, body))));
}

/**
 * An address as the link of the plan on show and the pinned plans' fragments. The pins follow the
 * plan's fragment after a second '#' ("#v=3&…&end#compare=v%3D3%26…&compare=…"): the fragment is
 * never sent to the server, where a long comparison in the query was refused (431 past ~16 KB,
 * issue 38). Addresses written before carry them in the query (?compare=): read too.
 */
export function splitPins(url) {
  const u = new URL(url);
  const fragments = u.searchParams.getAll(PARAM);
  if (fragments.length) u.searchParams.delete(PARAM);
  const parts = u.hash.slice(1).split('#');
  for (const part of parts) if (part.startsWith(`${PARAM}=`)) fragments.push(...new URLSearchParams(part).getAll(PARAM));
  u.hash = parts.filter((part) => !part.startsWith(`${PARAM}=`)).join('#');
  return { link: u.href.replace(/#$/, ''), fragments };
}

/** The address of `url`'s plan with the pins (each the fragment of a plan's link) after it. */
export function addressWith(url) {
  const { link } = splitPins(url);
  const fragments = pins.length ? pins.map((p) => p.fragment) : opening;
  return fragments.length ? `${link}#${new URLSearchParams(fragments.map((f) => [PARAM, f]))}` : link;
}

function pin() {
  if (!current || pins.length >= MAX_PINS || pins.some((p) => p.fragment === current.fragment)) return;
  pins.push(current);
  render();
  changed();
}

function unpin(i) {
  pins.splice(i, 1);
  render();
  changed();
  $('#pin-plan').focus();
}

/**
 * The plan on show: its report, scenario and link fragment (null report: invalid, nothing to pin).
 */
export function show(report, scenario, link) {
  if (report) lastReport = report;
  const cut = link ? link.indexOf('#') : -1;
  current = report && cut >= 0 ? { fragment: link.slice(cut + 1), scenario, report } : null;
  render();
}

/** The link of the scenario on show came after its estimate: the last report shown with it. */
export function linked(scenario, link) {
  if (lastReport) show(lastReport, scenario, link);
}

/**
 * Opens the pins of an address (splitPins): each link is read and estimated by the engine. Returns
 * the problems ("pinned plan 2: ..."), none when every pin opened.
 */
export async function open(url) {
  const fragments = splitPins(url).fragments.slice(0, MAX_PINS);
  opening = fragments;
  const problems = [];
  const opened = [];
  for (const [i, fragment] of fragments.entries()) {
    const base = new URL(url);
    base.search = '';
    base.hash = fragment;
    const r = await engine.fromLink(base.href);
    if (r.error) { problems.push(`pinned plan ${i + 1}: ${r.error.message}`); continue; }
    const answer = await engine.run(JSON.stringify(r.scenario), `compare-${i}`, { timeline: false }); // (the table draws no timeline)
    if (!answer?.report) { problems.push(`pinned plan ${i + 1}: ${answer?.errors?.[0] ? plainProblem(answer.errors[0]).message : 'not estimated'}`); continue; }
    opened.push({ fragment, scenario: r.scenario, report: answer.report });
  }
  pins = opened;
  opening = [];
  render();
  return problems;
}

/** Builds the Pin button and the comparison card; `onChange()` after pins change (the address follows). */
export function init(thePresets, onChange) {
  presets = thePresets;
  changed = onChange;
  $('#pin-plan').addEventListener('click', pin);
  render();
}

/** For tests and people: the pins' fragments. */
export const pinned = () => pins.map((p) => p.fragment);
