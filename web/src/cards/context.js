// What the results cards read beside the report: the groups of the cluster the report is for
// (scenario/groups.js describeGroups), its layout ('stages', 'replicas' or 'none': one group,
// even split), whether its scenario gives the input at a schema path (given("model.moe")) and the
// link presets (the census names a link by its id; the cards show its name). Set once per report
// (cards/index.js); the names and colours the cards give a group come from here.
import { h } from '../ui/dom.js';
import { groupColor } from '../scenario/groups.js';

export const shown = { report: null, groups: [], layout: 'none', given: () => true, links: [], full: null, timeline: null };

/**
 * Takes the report on show and its context ({groups, layout, given, links, full, timeline}, each
 * optional; full(): a promise of the report with every stage, engine/trim.js; timeline(): a
 * promise of the engine's answer with the schedule's events, for a report without them, or null
 * when a newer one superseded it).
 */
export function setReport(r, context = {}) {
  shown.report = r;
  shown.groups = context.groups ?? [];
  shown.layout = context.layout ?? 'none';
  shown.given = context.given ?? (() => true);
  shown.links = context.links ?? [];
  shown.full = context.full ?? (() => Promise.resolve(r));
  shown.timeline = context.timeline ?? (() => Promise.resolve(null));
}

export const linkName = (id) => shown.links.find((l) => l.id === id)?.name.replace(/\s*\(.*\)$/, '') ?? id;
/** Every stage of the report on show (asked of the engine when the worker sent the drawn ones). */
export const allStages = async (r) => (r.all_stages ? (await shown.full()).stages : r.stages);
export const many = () => shown.groups.length > 1;
export const gpuOf = (g) => shown.groups[g]?.gpu ?? `group ${g}`;
/** "A100 SXM4 80GB" -> "A100": the row labels of the timeline. */
export const gpuWord = (g) => gpuOf(g).split(' ')[0];
export const swatch = (g) => h('span', { class: 'swatch', style: { background: groupColor(g) } });
