// Effective bandwidth against message size on the Traffic card: the engine's `curves` (the cost
// model's busbw(S) = peak·S/(S + S_half) on each path the plan's groups use) as lines, and the
// census's operations (`bandwidth[]`, each operation's own busbw, latency included) as points in
// their curve's colour. Log size axis, linear GB/s axis.
import { chartCanvas } from '../ui/canvas.js';
import { si } from '../ui/format.js';

const WIDTH = 560;
const HEIGHT = 240;
const M = { left: 48, right: 10, top: 14, bottom: 34 };
const POWERS = { 0: '1 B', 10: '1 KiB', 20: '1 MiB', 30: '1 GiB', 40: '1 TiB' };
const COLOURS = ['#3b6fc4', '#c0392b', '#2e8b57', '#8e44ad', '#d35400', '#16a085', '#7f8c8d', '#b7950b'];

/** The chart as a canvas, and how many curves and points it drew. */
export function bandwidthChart(data) {
  const curves = data.curves ?? [];
  const ops = (data.bandwidth ?? []).filter((b) => b.message_bytes > 0 && b.busbw_Bps > 0);
  const { canvas, ctx } = chartCanvas('traffic-bandwidth', WIDTH, HEIGHT);
  const sizes = [...curves.flatMap((c) => c.sizes_bytes), ...ops.map((o) => o.message_bytes)];
  const lo = Math.log2(Math.min(1024, ...sizes));
  const hi = Math.log2(Math.max(2 ** 32, ...sizes));
  const top = Math.max(1, ...curves.map((c) => c.peak_Bps), ...ops.map((o) => o.busbw_Bps)) * 1.08;
  const x = (s) => M.left + ((Math.log2(s) - lo) / (hi - lo)) * (WIDTH - M.left - M.right);
  const y = (b) => HEIGHT - M.bottom - (b / top) * (HEIGHT - M.top - M.bottom);
  // Axes and ticks: powers of 1,024 along x, a few GB/s steps along y.
  ctx.strokeStyle = '#999';
  ctx.fillStyle = '#555';
  ctx.beginPath();
  ctx.moveTo(M.left, M.top);
  ctx.lineTo(M.left, HEIGHT - M.bottom);
  ctx.lineTo(WIDTH - M.right, HEIGHT - M.bottom);
  ctx.stroke();
  ctx.textAlign = 'center';
  for (let e = Math.ceil(lo / 10) * 10; e <= hi; e += 10)
    ctx.fillText(POWERS[e] ?? `2^${e} B`, x(2 ** e), HEIGHT - M.bottom + 13);
  ctx.fillText('message size (log scale)', (M.left + WIDTH - M.right) / 2, HEIGHT - 4);
  const step = 10 ** Math.floor(Math.log10(top / 4));
  const yStep = [1, 2, 5].map((m) => m * step).find((s) => top / s <= 6) ?? 10 * step;
  ctx.textAlign = 'right';
  for (let v = 0; v <= top; v += yStep) ctx.fillText(String(+(v / 1e9).toPrecision(3)), M.left - 4, y(v) + 4);
  ctx.save();
  ctx.translate(11, (M.top + HEIGHT - M.bottom) / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.textAlign = 'center';
  ctx.fillText('bus bandwidth (GB/s)', 0, 0);
  ctx.restore();
  curves.forEach((c, i) => {
    ctx.strokeStyle = COLOURS[i % COLOURS.length];
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    c.sizes_bytes.forEach((s, k) => (k ? ctx.lineTo(x(s), y(c.busbw_Bps[k])) : ctx.moveTo(x(s), y(c.busbw_Bps[k]))));
    ctx.stroke();
    ctx.fillStyle = ctx.strokeStyle;
    ctx.textAlign = 'left';
    const kinds = [...new Set(ops.filter((o) => o.curve === i).map((o) => o.group))].join(', ');
    ctx.fillText(`${c.link}${kinds ? ` (${kinds})` : ''}: up to ${si(c.peak_Bps, 'B/s')}`, M.left + 6, M.top + 12 * i + 4);
  });
  ctx.lineWidth = 1;
  for (const o of ops) {
    ctx.fillStyle = COLOURS[Math.max(0, o.curve) % COLOURS.length];
    ctx.beginPath();
    ctx.arc(x(o.message_bytes), y(o.busbw_Bps), 3, 0, 2 * Math.PI);
    ctx.fill();
  }
  canvas.setAttribute('aria-label', `Bus bandwidth against message size: ${curves.map((c) => `${c.link} up to ${si(c.peak_Bps, 'B/s')}`).join('; ')}; ${ops.length} census operations as points`);
  return { canvas, shown: { curves: curves.length, points: ops.length } };
}
