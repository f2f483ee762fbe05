// The iframe mode (?embed=1, set on <html> by index.html before the first paint): the compact
// calculator, no header, only the controls named in ?controls= (a few key ones by default).
import { $, $$ } from '../ui/dom.js';

export const EMBED = document.documentElement.classList.contains('embed');

const CONTROL_PATHS = {
  model: 'model', node: 'cluster.node', nodes: 'cluster.nodes', gpus_per_node: 'cluster.gpus_per_node',
  seq_len: 'seq_len',
};
const EMBED_CONTROLS = 'nodes,tp,pp,micro_batch,global_batch,recompute';

export function embedLayout() {
  const wanted = (new URLSearchParams(location.search).get('controls') || EMBED_CONTROLS)
    .split(',').map((c) => c.trim()).filter(Boolean);
  const paths = new Set(wanted.map((c) => CONTROL_PATHS[c] ?? `plan.${c}`));
  for (const el of $$('#inputs .field')) el.hidden = !paths.has(el.dataset.path);
  const any = (el) => $$('.field[data-path]', el).some((f) => paths.has(f.dataset.path));
  for (const fs of $$('#inputs fieldset')) fs.hidden = !any(fs);
  for (const d of $$('#inputs details')) {
    d.hidden = !any(d);
    d.open = true;
  }
  $('#f-model').removeAttribute('size');
}
