// The "Calibrated" badge on the Estimate card: what the engine fitted to the cluster's
// measurements (the report's calibration), how far each value moved from the presets, or nothing.
import { $, h } from '../ui/dom.js';

// The GEMM efficiencies a calibration may fit, and how the badge names each.
const GEMM = { gemm_efficiency: 'bf16', fp8_gemm_efficiency: 'fp8', fp4_gemm_efficiency: 'fp4', gemm_overhead_us: 'per-kernel time' };

export function renderCalibrated(c) {
  const el = $('#calibrated');
  el.hidden = !c;
  if (!c) return;
  const pct = (x) => `${x > 0 ? '+' : x < 0 ? '−' : '±'}${Math.abs(x).toFixed(1)} %`;
  // The compute scale when it was fitted or given (or when it is all there is to say).
  const compute = `compute ×${c.compute_scale.toFixed(3)} (${pct(c.compute_change_pct)}${c.compute_scale_fitted ? `, fitted to ${c.runs?.length ?? 0} measured run${c.runs?.length === 1 ? '' : 's'}` : ''})`;
  const parts = [];
  if (c.network_scale_fitted || c.network_scale !== 1) parts.push(`network ×${c.network_scale.toFixed(3)} (${pct(c.network_change_pct)}${c.network_scale_fitted ? ', fitted' : ''})`);
  for (const [k, what] of [['intra_node_link', 'inside nodes'], ['inter_node_link', 'between nodes']])
    if (c[k]) parts.push(`measured link ${what}`);
  if (c.gemm) parts.push(`measured GEMMs (${Object.keys(GEMM).filter((k) => c.gemm[k]).map((k) => `${GEMM[k]} ${pct(c.gemm[k].change_pct)}`).join(', ')})`);
  if (c.layer_profiles) parts.push(`measured layers (${c.layer_profiles_used} of ${c.layer_profiles} profiles of this plan's shape)`);
  if (c.compute_scale_fitted || c.compute_scale !== 1 || !parts.length) parts.unshift(compute);
  el.replaceChildren(h('span', { class: 'badge' }, 'Calibrated'), ` to your cluster: ${parts.join(', ')}.`);
}
