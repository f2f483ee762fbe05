// ?embed=1: the page as the compact calculator, for a site that cannot run scripts and frames the
// page instead. The page is then one <stepcast-calculator> (element.js), the calculator a
// documentation page embeds: the link in the address, the controls named in ?controls=, and
// "Open in Stepcast" to the full page (this address without ?embed). index.html marks the page
// (<html class="embed">) before the first paint, so the full page never shows.
//
// The frame says how tall the calculator is: {type: "stepcast:height", height} (CSS pixels) to its
// parent on every change of size (a notice, an error line, a narrower frame that wraps the
// controls), so a host page that listens sizes the iframe to fit (docs/embed.md has the snippet).
// The height is no secret: it goes to any origin ('*'); the host checks which frame sent it.
import * as engine from '../engine/bridge.js';
import { h } from '../ui/dom.js';
import './element.js';

// An iframe's controls when ?controls= names none (the element's own default is fewer).
const CONTROLS = 'nodes,tp,pp,micro_batch,global_batch,recompute';
const HEIGHT_MESSAGE = 'stepcast:height';

/** Posts `main`'s height to the parent window whenever it changes (nothing when not framed). */
function postHeight(main) {
  if (window.parent === window) return;
  let last = -1;
  const post = () => {
    const height = Math.ceil(main.getBoundingClientRect().bottom + window.scrollY);
    if (height === last) return;
    last = height;
    window.parent.postMessage({ type: HEIGHT_MESSAGE, height }, '*');
  };
  new ResizeObserver(post).observe(main);
  post();
}

/** Shows the calculator of the address; without a link in it, of `fallback` (a scenario). */
export async function showCalculator(fallback) {
  const full = new URL(location.href);
  full.hash = '';
  full.searchParams.delete('embed');
  full.searchParams.delete('controls');
  const page = full.href;
  const link = location.hash.length > 1 ? location.hash : (await engine.toLink(fallback, {}, page)).link ?? '';
  const el = h('stepcast-calculator', {
    scenario: link, page, controls: new URLSearchParams(location.search).get('controls') || CONTROLS,
  });
  const main = h('main', { class: 'embed-main' }, el);
  document.body.replaceChildren(main);
  postHeight(main);
  // A link pasted into the frame's address opens in it.
  window.addEventListener('hashchange', () => el.setAttribute('scenario', location.hash));
}
