// The status line above the results (loading, a problem, out of memory; hidden when all is well),
// the engine's download bar in it, and the headline numbers read to screen readers.
import { $, h } from '../ui/dom.js';
import * as engine from '../engine/bridge.js';
import { stats } from './stats.js';

export function setStatus(kind, ...content) {
  const el = $('#status');
  if (kind === 'ok' && stats.state === 'ok') return;
  el.className = `status ${kind}`;
  el.replaceChildren(...content);
  el.hidden = kind === 'ok';
  stats.state = kind;
  document.body.dataset.state = kind;
}

/** "Go to Heads": moves the focus to the field a problem went to. */
export function focusButton(field) {
  if (!field) return null;
  const label = field.dataset.label ?? field.querySelector('label')?.textContent ?? 'the field';
  return h('button', { type: 'button', class: 'link', onclick: () => field.querySelector('input, select')?.focus() },
    `Go to ${label}`);
}

/** " (and 2 more problems, each at its field)" */
export const more = (n) => (n > 1 ? ` (and ${n - 1} more problem${n > 2 ? 's' : ''}, each at its field)` : '');

// Screen readers hear the headline numbers of each estimate (a polite live region), once typing
// pauses: a change a keystroke would otherwise be read out mid-word.
const ANNOUNCE_MS = 800;
let announceTimer = 0;
export function announce(text) {
  clearTimeout(announceTimer);
  announceTimer = setTimeout(() => { $('#announce').textContent = text; }, ANNOUNCE_MS);
}

/** The loading bar in the status line: the .wasm's bytes so far. Returns the function that stops it. */
export function showLoading() {
  const kb = (n) => `${Math.round(n / 1024).toLocaleString('en-US')} KB`;
  return engine.onLoading(({ loaded, total }) => {
    $('#engine-progress').value = loaded / total;
    $('#engine-bytes').textContent = `${kb(loaded)} of ${kb(total)}`;
  });
}
