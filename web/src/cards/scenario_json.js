// The Scenario JSON card: the scenario on show as the engine's JSON (the update cycle writes it
// into #scenario-json), to copy or download, and a scenario file to open.
import { $ } from '../ui/dom.js';
import { copy, save } from '../ui/download.js';
import { linkProblem } from '../scenario/link.js';

/**
 * Wires the card. `open(scenario)` shows a scenario (resolving once the form holds it);
 * `refuse(fileName, why)` says why a file cannot be shown.
 */
export function initScenarioJson(presets, open, refuse) {
  const text = () => `${$('#scenario-json').textContent}\n`;
  $('#copy-json').addEventListener('click', () => copy($('#copy-json'), text()));
  $('#download-json').addEventListener('click', () => save('scenario.json', text(), 'application/json'));
  $('#open-json').addEventListener('change', async (e) => {
    const file = e.target.files?.[0];
    if (!file) return;
    try {
      const s = JSON.parse(await file.text());
      const problem = linkProblem(s, presets);
      if (problem) throw new Error(problem);
      await open(s);
    } catch (err) {
      refuse(file.name, err.message);
    }
    e.target.value = '';
  });
}
