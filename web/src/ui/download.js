// Saving what the page shows: a table as CSV, a canvas chart as PNG, an SVG chart as SVG, any text
// as a file or to the clipboard. Everything is made in the page (no server), from the numbers the page already has.
import { h } from './dom.js';

/** Saves `content` (text or a Blob) as a file called `name`. */
export function save(name, content, type = 'text/plain') {
  const blob = content instanceof Blob ? content : new Blob([content], { type });
  const url = URL.createObjectURL(blob);
  h('a', { href: url, download: name }).click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/**
 * Copies `text` to the clipboard; `button` says so for 1.5 s ("Copied"), or, where the browser
 * refuses, how to copy by hand, then reads `label` again.
 */
export async function copy(button, text, { label = 'Copy', done = 'Copied', refused = 'Select the text to copy' } = {}) {
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = done;
  } catch {
    button.textContent = refused;
  }
  setTimeout(() => { button.textContent = label; }, 1500);
}

/** One CSV field: quoted when it holds a comma, a quote or a line break (RFC 4180). */
const field = (v) => {
  const s = v === null || v === undefined ? '' : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
};

/** CSV text of `rows` (arrays; the first is the header). */
export const csv = (rows) => rows.map((r) => r.map(field).join(',')).join('\r\n') + '\r\n';

/** A "CSV" button that saves `rows()` (computed when clicked; an array or its promise) as `name`. */
export function csvButton(name, rows, label = 'CSV') {
  return h('button', { type: 'button', class: 'small', 'data-download': name, onclick: async () => save(name, csv(await rows()), 'text/csv') }, label);
}

/** A "PNG" button that saves the canvas `canvas()` returns (or its promise) as `name`. */
export function pngButton(name, canvas) {
  return h('button', {
    type: 'button', class: 'small', 'data-download': name,
    onclick: async () => (await canvas())?.toBlob((blob) => blob && save(name, blob)),
  }, 'PNG');
}

/** An "SVG" button that saves the <svg> element `svg()` returns as `name` (styles it uses inlined). */
export function svgButton(name, svg) {
  return h('button', {
    type: 'button', class: 'small', 'data-download': name,
    onclick: () => {
      const el = svg();
      if (!el) return;
      const copy = el.cloneNode(true);
      copy.setAttribute('xmlns', 'http://www.w3.org/2000/svg');
      // The page's colours are CSS custom properties: write the values they have now.
      const style = getComputedStyle(el);
      const text = new XMLSerializer().serializeToString(copy)
        .replace(/var\((--[\w-]+)\)/g, (m, name) => style.getPropertyValue(name).trim() || m);
      save(name, text, 'image/svg+xml');
    },
  }, 'SVG');
}
