// Keys that mean something only with another input (the schema's "needs": expert parallelism for
// a model with experts, MLA's ranks for MLA attention, the windowed layers with a window). While
// the scenario lacks that input, their fields are hidden (not just disabled: a dense model's form
// shows no EP) and the keys are left out of the scenario, so that neither the estimate nor the
// link carries a setting that does nothing. Generic: a key the engine gives a "needs" is handled
// with no change here.
import { $$ } from '../ui/dom.js';
import { applies, conditional } from '../scenario/schema.js';
import { modelObject } from './model.js';
import { setIn, state } from './state.js';

/** The scenario with its model as an object (a preset's from the presets): what a "needs" reads. */
export const view = () => ({ ...state.scenario, model: modelObject() });

/** Whether the input at schema path `path` applies to the scenario on show. */
export const appliesTo = (k) => applies(k, view());

/**
 * Leaves out of the scenario the keys that do not apply to it, and hides their fields (and a
 * group of fields, [data-needs-group], when none of its fields is left).
 */
export function apply() {
  for (const k of conditional()) {
    const on = applies(k, view()); // afresh: leaving one key out may take another's input away
    if (!on) setIn(state.scenario, k.path, undefined);
    for (const f of $$(`#inputs [data-path="${k.path}"]`)) f.classList.toggle('unmet', !on);
  }
  for (const g of $$('#inputs [data-needs-group]')) {
    const hide = $$('.field', g).every((f) => f.classList.contains('unmet'));
    if (g.hidden !== hide) g.hidden = hide;
  }
}
