// The calibration fits that need the engine (form/calibration.js wires their buttons): nccl-tests
// output to a link, a GEMM table to the GPU's efficiencies. Loaded on the first click, off the
// first visit (web/vite.config.js counts what a first visit downloads).
import { $ } from '../ui/dom.js';
import * as engine from '../engine/bridge.js';
import { groupGpus } from './cluster.js';
import { state } from './state.js';

// nccl-tests: fitted by the engine; the tier comes from the output (one host or several).
let fitting = null;
export async function fitNccl(notify, { say, setCalibration, calibration }) {
  const text = $('#cal-nccl').value;
  if (!text.trim()) return say('error', 'Paste the output of an nccl-tests run (all_reduce_perf, all_gather_perf, ...) first.');
  const mine = (fitting = {});
  // A run across nodes is fitted per network port: the node's bandwidth over its NICs, which the
  // cluster on show says (its first group; without it the engine takes one NIC per GPU).
  const nics = state.resolved?.groups?.[0]?.nics_per_node;
  // Output measured on other GPUs than the cluster's (of one GPU type) is refused by the engine;
  // the cluster's GPU as written while the plan on show is invalid.
  const gpus = [...new Set(groupGpus())];
  const r = await engine.ncclLink([{ name: 'pasted output', text }], nics, gpus.length === 1 && gpus[0] ? gpus[0] : undefined);
  if (mine !== fitting) return undefined;
  if (r.error?.code === 'invalid_cluster') return say('error', `Not fitted: ${r.error.message}.`);
  if (r.error) return say('error', `Not nccl-tests output this page can read: ${r.error.message}`);
  const key = r.link.scope === 'inter_node' ? 'inter_node_link' : 'intra_node_link';
  setCalibration({ ...calibration(), [key]: r.link });
  const worst = 100 * Math.max(0, ...(r.checks ?? []).map((c) => Math.abs(c.max_busbw_error ?? 0)));
  const where = key === 'inter_node_link' ? `link between nodes (per port, ${nics > 0 ? `${nics} per node as in the cluster on show` : 'one per GPU'})` : 'link inside a node';
  say('ok', `Fitted the ${where}: ` +
    `${r.link.busbw_GBps.toFixed(1)} GB/s bus bandwidth, ${(r.link.half_peak_bytes / 2 ** 20).toFixed(2)} MiB to half of it` +
    `${r.checks?.length ? `; it reproduces the measured bus bandwidths from 1 MiB within ${worst.toFixed(1)} %` : ''}.`);
  notify();
  return undefined;
}

// A GEMM table: fitted by the engine on the cluster's GPU (one type; the engine refuses a mix).
export async function fitGemm(notify, { say, setCalibration, calibration }) {
  const text = $('#cal-gemm').value;
  if (!text.trim()) return say('error', 'Paste a GEMM table (m,n,k,dtype,tflops; the README shows a PyTorch loop that prints one) first.');
  const mine = (fitting = {});
  const r = await engine.gemmFit(text, { ...state.scenario, calibration: undefined });
  if (mine !== fitting) return undefined;
  if (r.error) return say('error', `Not a GEMM table this page can fit: ${r.error.message}`);
  setCalibration({ ...calibration(), gemm: r.gemm });
  const words = ['gemm', 'fp8_gemm', 'fp4_gemm'].filter((k) => `${k}_efficiency` in r.gemm).map((k) =>
    `${k.replace('gemm', '').replace('_', '') || 'bf16'} efficiency ${r.gemm[`${k}_efficiency`]} (preset ${+r.preset[`${k}_efficiency`].toFixed(4)})`);
  words.push(`${r.gemm.gemm_overhead_us.toFixed(2)} µs per kernel (preset ${+r.preset.gemm_overhead_us.toFixed(2)})`);
  say('ok', `Fitted on the ${r.gpu} from ${r.rows} GEMMs: ${words.join(', ')}; it reproduces their times within ${(100 * r.max_time_error).toFixed(1)} %.`);
  notify();
  return undefined;
}

