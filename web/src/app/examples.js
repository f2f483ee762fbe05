// The Example menu in the header: every scenario of web/examples/scenarios/, the default one first
// on show, and Reset (back to the example the plan started from).
import { $, h } from '../ui/dom.js';
import { scenarioLabel } from '../scenario/label.js';
import { userChange } from './address.js';
import { load } from './update.js';
import defaultScenario from '../../examples/scenarios/llama3-70b_dgx-h100x8.json';

export { defaultScenario };

const examples = import.meta.glob('../../examples/scenarios/*.json', { eager: true, import: 'default' });
const defaultPath = () => Object.keys(examples).find((k) => examples[k] === defaultScenario) ?? '';
let startedFrom = null; // the example the plan started from (Reset goes back to it)

/** "the default scenario (Llama 3 70B on 8 × DGX H100, TP 8 × PP 4)". */
export const defaultLabel = (presets) => `the default scenario (${scenarioLabel(defaultScenario, presets)})`;

/** The menu shows no example: the plan on show is no longer one. */
export function clearChoice() {
  $('#examples').value = '';
}

/** Builds the menu and wires it and Reset. */
export function initExamples(presets) {
  const select = $('#examples');
  for (const [path, s] of Object.entries(examples).sort()) {
    const label = s.name ?? scenarioLabel(s, presets);
    select.append(h('option', { value: path }, s === defaultScenario ? `${label} (the default)` : label));
  }
  // A long example name is cut in the closed menu: the whole of it on hover.
  const titleOfChoice = () => { select.title = select.selectedOptions[0]?.textContent ?? ''; };
  select.addEventListener('change', titleOfChoice);
  select.addEventListener('change', () => {
    if (!select.value) return;
    userChange({ newEntry: true }); // an example is a new entry, however soon after an edit
    startedFrom = select.value;
    load(examples[select.value]);
  });
  $('#reset-example').addEventListener('click', () => {
    const path = startedFrom ?? defaultPath();
    userChange({ newEntry: true });
    select.value = path;
    load(examples[path]);
  });
}

/** Shows the default scenario, chosen in the menu. */
export async function showDefault() {
  await load(defaultScenario);
  $('#examples').value = defaultPath();
  $('#examples').title = $('#examples').selectedOptions[0]?.textContent ?? '';
}
