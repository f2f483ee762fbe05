// The Warnings card: the engine's warnings about the estimate on show (hidden when none).
import { $, fill, h } from '../ui/dom.js';

// Warnings listed at most: a plan of thousands of stages may warn about each (one per stage).
const MAX_WARNINGS = 50;

export function renderWarnings(r) {
  const box = $('#warnings');
  box.hidden = r.warnings.length === 0;
  const more = r.warnings.length - MAX_WARNINGS;
  fill($('#warnings-list'), r.warnings.slice(0, MAX_WARNINGS).map((w) => h('li', null, w)),
    more > 0 ? h('li', { class: 'hint' }, `and ${more.toLocaleString('en-US')} more of the same kinds (the JSON export has every one)`) : null);
}
