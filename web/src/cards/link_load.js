// The link load strip chart of the Traffic card: the engine's `load` (traffic.h's LinkLoad:
// bytes per second in 200 bins of the timeline, a coarse spread of each phase's bytes over its
// blocks) as three strips, all GPUs' scale-up sends, all NICs' scale-out sends and the busiest
// NIC, each against its capacity (a dashed line). Each strip has its own scale, up to the larger
// of its peak and its capacity, so a strip above its line is a link asked for more than it has.
import { chartCanvas } from '../ui/canvas.js';
import { seconds, si } from '../ui/format.js';

const WIDTH = 560;
const STRIP = 46;
const GAP = 18;
const AXIS = 18;

function strips(load) {
  const out = [
    { key: 'scale_up', label: 'Scale-up, all GPUs', rates: load.scale_up_bytes_per_s, capacity: load.scale_up_capacity_bytes_per_s },
    { key: 'scale_out', label: 'Scale-out, all NICs', rates: load.scale_out_bytes_per_s, capacity: load.scale_out_capacity_bytes_per_s },
    { key: 'busiest_nic', label: `Busiest NIC (#${load.busiest_nic})`, rates: load.busiest_nic_bytes_per_s, capacity: load.nic_capacity_bytes_per_s },
  ];
  // One node: no network, nothing to draw for it.
  return out.filter((s) => s.capacity > 0 || s.rates.some((r) => r > 0));
}

/** The chart as a canvas, and what it shows: bytes per series (the bins' integral) and peaks. */
export function loadChart(load) {
  const rows = strips(load);
  const height = rows.length * (STRIP + GAP) + AXIS;
  const { canvas, ctx } = chartCanvas('traffic-load', WIDTH, height);
  const shown = {};
  const span = load.bin_s * load.bins;
  rows.forEach((s, i) => {
    const top = i * (STRIP + GAP) + GAP - 4;
    const peak = Math.max(...s.rates);
    const scale = Math.max(peak, s.capacity) * 1.05 || 1;
    const y = (v) => top + STRIP - (STRIP * v) / scale;
    const dx = WIDTH / s.rates.length;
    ctx.fillStyle = '#f3f5f9';
    ctx.fillRect(0, top, WIDTH, STRIP);
    ctx.fillStyle = '#3b6fc4';
    s.rates.forEach((v, b) => { if (v > 0) ctx.fillRect(b * dx, y(v), Math.ceil(dx), top + STRIP - y(v)); });
    if (s.capacity > 0) {
      ctx.strokeStyle = '#c0392b';
      ctx.setLineDash([4, 3]);
      ctx.beginPath();
      ctx.moveTo(0, y(s.capacity) + 0.5);
      ctx.lineTo(WIDTH, y(s.capacity) + 0.5);
      ctx.stroke();
      ctx.setLineDash([]);
    }
    ctx.fillStyle = '#222';
    ctx.textAlign = 'left';
    ctx.fillText(s.label, 0, top - 4);
    ctx.textAlign = 'right';
    ctx.fillText(`peak ${si(peak, 'B/s')}${s.capacity > 0 ? `, capacity ${si(s.capacity, 'B/s')}` : ''}`, WIDTH, top - 4);
    shown[s.key] = { bytes: s.rates.reduce((a, v) => a + v * load.bin_s, 0), peak, capacity: s.capacity };
  });
  ctx.fillStyle = '#555';
  const base = height - 4;
  ctx.textAlign = 'left';
  ctx.fillText('0 s', 0, base);
  ctx.textAlign = 'center';
  ctx.fillText(`time in the iteration (${load.bins} bins of ${seconds(load.bin_s)})`, WIDTH / 2, base);
  ctx.textAlign = 'right';
  ctx.fillText(seconds(span), WIDTH, base);
  canvas.setAttribute('aria-label', `Bytes per second over one iteration: ${rows.map((s) => `${s.label} peak ${si(shown[s.key].peak, 'B/s')}`).join('; ')}`);
  return { canvas, shown };
}
