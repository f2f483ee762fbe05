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

export function renderCensus(r) {
  // The stage picked, when this report holds it (a plan of many stages: those the cards draw).
  if (censusStage === null || !stageAt(r, censusStage)) censusStage = 0;
  // A menu of the stages; past MAX_STAGE_ROWS, the shown ones and the one picked.
  const listed = shownStages(r, 'compute').stages;
  if (!listed.some((s) => s.index === censusStage)) listed.push(stageAt(r, censusStage));
  const select = h('select', { id: 'census-stage', 'data-local': 'true' },
    listed.sort((a, b) => a.index - b.index).map((s) => h('option', { value: s.index },
      `Stage ${s.index}${many() ? ` (${gpuOf(s.group ?? 0)})` : ''}${s.index === r.bottleneck_stage ? ' (bottleneck)' : ''}`)));
  select.value = String(censusStage);
  select.addEventListener('change', () => { censusStage = Number(select.value); renderCensus(shown.report); });
  const st = stageAt(r, censusStage);
  const head = [['Kind', 'census_kind'], ['Group', 'census_group'], ['Phase'], ['Count', 'census_count'],
    ['Size each', 'census_bytes'], ['Link', 'census_link'], ['Time each', 'census_time'], ['Total']];
  const numeric = new Set(['Count', 'Size each', 'Time each', 'Total']);
  const total = st.communication.reduce((a, op) => a + op.total_time_s, 0);
  fill($('#census'),
    h('div', { class: 'field inline' }, h('label', { for: 'census-stage' }, 'Pipeline stage'), select,
      h('span', { class: 'hint' }, `${st.communication.length} kinds of operation, ${duration(total)} in all per iteration (before overlap)`)),
    h('div', { class: 'table-scroll', tabindex: '0', role: 'region', 'aria-label': 'Communication census table' },
      h('table', { class: 'census' },
        h('caption', { class: 'sr-only' }, `Communication per GPU per iteration, stage ${censusStage}`),
        h('thead', null, h('tr', null, head.map(([t, term]) => h('th', { scope: 'col', class: numeric.has(t) ? 'num' : '' },
          t, term ? tip(term, t) : null)))),
        h('tbody', null, st.communication.map((op) => h('tr', null,
          h('td', { class: 'op' }, h('span', { class: 'kind' }, op.kind), h('span', { class: 'what' }, op.what)),
          h('td', { 'data-label': 'Group' }, `${op.group} (${op.group_size})`),
          h('td', { 'data-label': 'Phase' }, op.phase.replace('_', ' ')),
          h('td', { class: 'num', 'data-label': 'Count' }, integer(op.count)),
          h('td', { class: 'num', 'data-label': 'Size each' }, bytes(op.bytes)),
          h('td', { 'data-label': 'Link', title: op.link }, linkName(op.link)),
          h('td', { class: 'num', 'data-label': 'Time each' }, duration(op.time_s)),
          h('td', { class: 'num', 'data-label': 'Total', 'data-value': String(op.total_time_s) }, duration(op.total_time_s))))),
        h('tfoot', null, h('tr', null, h('th', { scope: 'row', colspan: 7 }, 'All operations, before overlap'),
          h('td', { class: 'num', 'data-label': 'Total' }, duration(total)))))),
    h('p', { class: 'buttons' }, 'Download ', csvButton(`census-stage-${censusStage}.csv`, () => [
      ['kind', 'what', 'group', 'group_size', 'phase', 'count', 'bytes', 'link', 'time_s', 'total_time_s'],
      ...st.communication.map((op) => [op.kind, op.what, op.group, op.group_size, op.phase, op.count, op.bytes, op.link, op.time_s, op.total_time_s])])));
}
