// The Communication census card: every collective and send of one pipeline stage per iteration
// (the report's stages[].communication): kind, group, phase, count, size, link and time, as a
// table and CSV, with a menu of the stages.
import { $, fill, h } from '../ui/dom.js';
import { csvButton } from '../ui/download.js';
import { bytes, duration, integer } from '../ui/format.js';
import { tip } from '../ui/tooltip.js';
import { gpuOf, linkName, many, shown } from './context.js';
import { shownStages, stageAt } from './stages.js';

let censusStage = null; // the stage on show

// The card's elements, built once: each report rewrites the menu's options when they change, the
// texts, and the table's rows. (Its head's eight "?" and the rest were built anew each edit.)
let dom = null;

const HEAD = [['Kind', 'census_kind'], ['Group', 'census_group'], ['Phase'], ['Count', 'census_count'],
  ['Size each', 'census_bytes'], ['Link', 'census_link'], ['Time each', 'census_time'], ['Total']];
const NUMERIC = new Set(['Count', 'Size each', 'Time each', 'Total']);

function censusDom() {
  if (dom) return dom;
  const select = h('select', { id: 'census-stage', 'data-local': 'true' });
  select.addEventListener('change', () => { censusStage = Number(select.value); renderCensus(shown.report); });
  dom = {
    select, options: '', summary: h('span', { class: 'hint' }), caption: h('caption', { class: 'sr-only' }),
    rows: h('tbody'), total: h('td', { class: 'num', 'data-label': 'Total' }), buttons: h('p', { class: 'buttons' }),
  };
  fill($('#census'),
    h('div', { class: 'field inline' }, h('label', { for: 'census-stage' }, 'Pipeline stage'), select, dom.summary),
    h('div', { class: 'table-scroll', tabindex: '0', role: 'region', 'aria-label': 'Communication census table' },
      h('table', { class: 'census' }, dom.caption,
        h('thead', null, h('tr', null, HEAD.map(([t, term]) => h('th', { scope: 'col', class: NUMERIC.has(t) ? 'num' : '' },
          t, term ? tip(term, t) : null)))),
        dom.rows,
        h('tfoot', null, h('tr', null, h('th', { scope: 'row', colspan: 7 }, 'All operations, before overlap'), dom.total)))),
    dom.buttons);
  return dom;
}

export function renderCensus(r) {
  const d = censusDom();
  // The stage picked, when this report holds it (a plan of many stages: those the cards draw).
  if (censusStage === null || !stageAt(r, censusStage)) censusStage = 0;
  // A menu of the stages; past MAX_STAGE_ROWS, the shown ones and the one picked.
  const listed = shownStages(r, 'compute').stages;
  if (!listed.some((s) => s.index === censusStage)) listed.push(stageAt(r, censusStage));
  const options = listed.sort((a, b) => a.index - b.index).map((s) => [s.index,
    `Stage ${s.index}${many() ? ` (${gpuOf(s.group ?? 0)})` : ''}${s.index === r.bottleneck_stage ? ' (bottleneck)' : ''}`]);
  const key = options.map(([i, label]) => `${i}:${label}`).join('\n');
  if (key !== d.options) {
    d.options = key;
    fill(d.select, options.map(([i, label]) => h('option', { value: i }, label)));
  }
  d.select.value = String(censusStage);
  const st = stageAt(r, censusStage);
  const total = st.communication.reduce((a, op) => a + op.total_time_s, 0);
  d.summary.textContent = `${st.communication.length} kinds of operation, ${duration(total)} in all per iteration (before overlap)`;
  d.caption.textContent = `Communication per GPU per iteration, stage ${censusStage}`;
  fill(d.rows, st.communication.map((op) => h('tr', null,
    h('td', { class: 'op' }, h('span', { class: 'kind' }, op.kind), h('span', { class: 'what' }, op.what)),
    h('td', { 'data-label': 'Group' }, `${op.group} (${op.group_size})`),
    h('td', { 'data-label': 'Phase' }, op.phase.replace('_', ' ')),
    h('td', { class: 'num', 'data-label': 'Count' }, integer(op.count)),
    h('td', { class: 'num', 'data-label': 'Size each' }, bytes(op.bytes)),
    h('td', { 'data-label': 'Link', title: op.link }, linkName(op.link)),
    h('td', { class: 'num', 'data-label': 'Time each' }, duration(op.time_s)),
    h('td', { class: 'num', 'data-label': 'Total', 'data-value': String(op.total_time_s) }, duration(op.total_time_s)))));
  d.total.textContent = duration(total);
  fill(d.buttons, 'Download ', csvButton(`census-stage-${censusStage}.csv`, () => [
    ['kind', 'what', 'group', 'group_size', 'phase', 'count', 'bytes', 'link', 'time_s', 'total_time_s'],
    ...st.communication.map((op) => [op.kind, op.what, op.group, op.group_size, op.phase, op.count, op.bytes, op.link, op.time_s, op.total_time_s])]));
}
