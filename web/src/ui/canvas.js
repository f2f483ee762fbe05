// A canvas for a chart drawn in CSS pixels: its backing store at the screen's pixel density (sharp
// on high-density screens), its shape kept as the page scales it, the charts' font set.
import { h } from './dom.js';

/** {canvas, ctx}: a `width` × `height` (CSS pixels) canvas of class `cls`, ready to draw on. */
export function chartCanvas(cls, width, height) {
  const dpr = globalThis.devicePixelRatio || 1;
  const canvas = h('canvas', { class: cls, role: 'img', width: width * dpr, height: height * dpr });
  canvas.style.aspectRatio = `${width} / ${height}`;
  const ctx = canvas.getContext('2d');
  ctx.scale(dpr, dpr);
  ctx.font = '11px system-ui, sans-serif';
  return { canvas, ctx };
}
