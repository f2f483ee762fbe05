// The Warnings card: the engine's warnings about the estimate on show (hidden when none).
import { $, fill, h } from '../ui/dom.js';

export function renderWarnings(r) {
  const box = $('#warnings');
  box.hidden = r.warnings.length === 0;
  fill($('#warnings-list'), r.warnings.map((w) => h('li', null, w)));
}
