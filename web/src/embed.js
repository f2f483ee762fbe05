// <stepcast-calculator>: a live Stepcast calculator for documentation pages. The author adds one
// script and one element:
//
//   <script src="/stepcast-embed.js"></script>
//   <stepcast-calculator scenario="v=1&model=llama3-70b&node=dgx-h100&nodes=8&tp=8&pp=4&gbs=512"
//     controls="tp,pp,micro_batch" compact></stepcast-calculator>
//
// Attributes: scenario (a link, or just its fragment "v=1&..."; the engine reads it, as the page
// does), controls (comma-separated, see CONTROLS; default "tp,pp,micro_batch"), compact, theme
// (light, dark; default: the reader's setting), page (the full page's address for "Open in
// Stepcast"; default: the page of this bundle). Every calculator of a document shares one engine
// (one worker); each has its own request channels, so they never cancel each other. Everything
// lives in a shadow root: the document's styles do not reach in, and these do not leak out. The
// element fires "stepcast-estimate" (detail: the report's headline numbers) after each estimate.
// For scripts and tests: el.scenario (the plan on show), el.rendered (the scenario text whose
// estimate is on show), el.link (its link, for el.linked), el.dataset.state (ok, oom, error).
import { h } from './dom.js';
import * as engine from './engine.js';
import { duration, gib, money, percent } from './format.js';
import { clusterGroups } from './groups.js';
import { billions, linkMessage, linkProblem, pageSettings } from './link.js';
import css from './embed.css?inline';

const TAG = 'stepcast-calculator';
const DEFAULT_CONTROLS = 'tp,pp,micro_batch';
// The full page of this bundle (this module lives in assets/; in development, in src/).
const PAGE = new URL(/* @vite-ignore */ '../', import.meta.url).href;
// The engine's defaults for plan keys a scenario leaves out (engine/src/scenario.cpp).
const PLAN_DEFAULTS = { tp: 1, pp: 1, cp: 1, vpp: 1, micro_batch: 1, sequence_parallel: false, recompute: 'none',
  distributed_optimizer: false, zero_stage: 0, precision: 'bf16', flash_attention: true, tp_comm_overlap: false };

// name -> [label, kind, unit or options]; kind: int (a plan integer), select, check (plan flags),
// or one of the special ones handled in read()/value().
const CONTROLS = {
  model: ['Model', 'model'],
  node: ['Node', 'node'],
  nodes: ['Nodes', 'nodes', 'nodes'],
  tp: ['TP', 'int', 'GPUs'],
  pp: ['PP', 'int', 'stages'],
  dp: ['DP', 'int', 'replicas'],
  cp: ['CP', 'int', 'GPUs'],
  vpp: ['VPP', 'int', 'chunks'],
  micro_batch: ['Micro-batch', 'int', 'samples'],
  global_batch: ['Global batch', 'int', 'samples'],
  seq_len: ['Sequence length', 'seq_len', 'tokens'],
  recompute: ['Recompute', 'select', ['none', 'selective', 'full']],
  precision: ['Precision', 'select', ['bf16', 'fp16', 'fp8', 'fp32']],
  zero_stage: ['ZeRO stage', 'select', ['0', '1', '2', '3']],
  sequence_parallel: ['Sequence parallel', 'check'],
  distributed_optimizer: ['Distributed optimizer', 'check'],
  flash_attention: ['FlashAttention', 'check'],
  tp_comm_overlap: ['TP comm overlap', 'check'],
  tokens: ['Tokens to train', 'tokens', 'billion'],
  price: ['Price', 'price', '$/GPU-h'],
};

let sheet = null;
function styles() {
  if (!sheet && 'adoptedStyleSheets' in Document.prototype) {
    sheet = new CSSStyleSheet();
    sheet.replaceSync(css);
  }
  return sheet;
}

let serial = 0;
const clone = (x) => JSON.parse(JSON.stringify(x));
const groupOf = (s) => (Array.isArray(s.cluster?.groups) ? s.cluster.groups[0] : s.cluster);

class StepcastCalculator extends HTMLElement {
  static get observedAttributes() { return ['scenario', 'controls', 'page']; }

  constructor() {
    super();
    this.id_ = `sc${++serial}`;
    this.root = this.attachShadow({ mode: 'open' });
    const shared = styles();
    if (shared) this.root.adoptedStyleSheets = [shared];
    else this.root.append(h('style', null, css));
    this.wrap = h('div', { class: 'sc', role: 'group', 'aria-label': 'Stepcast calculator' });
    this.root.append(this.wrap);
    this.generation = 0;
    this.wrap.addEventListener('input', () => this.update());
    this.wrap.addEventListener('change', () => this.update());
  }

  connectedCallback() {
    if (!this.started) {
      this.started = true;
      this.open();
    }
  }

  attributeChangedCallback() {
    if (this.started) this.open();
  }

  $(sel) { return this.wrap.querySelector(sel); }

  /** (Re)reads the attributes and builds the calculator. */
  async open() {
    const generation = ++this.generation;
    this.wrap.replaceChildren(h('p', { class: 'sc-status' }, 'Loading Stepcast…'));
    let ready;
    let r;
    try {
      ready = await engine.ready();
      r = await engine.fromLink(this.getAttribute('scenario') ?? '');
    } catch (err) {
      if (generation === this.generation) this.fail(`the engine did not load (${err.message})`);
      return;
    }
    if (generation !== this.generation) return;
    this.presets = ready.presets;
    const problem = r.error ? `its scenario could not be read (${linkMessage(r.error)})` : linkProblem(r.scenario, ready.presets);
    if (problem) {
      this.fail(problem);
      return;
    }
    this.scenario = r.scenario;
    this.page = r.page ?? {};
    this.controls = (this.getAttribute('controls') ?? DEFAULT_CONTROLS).split(',').map((c) => c.trim())
      .filter((c) => {
        if (CONTROLS[c]) return true;
        if (c) console.warn(`<${TAG}>: no control "${c}"; known: ${Object.keys(CONTROLS).join(', ')}`);
        return false;
      });
    // DP left to the engine (GPUs / (TP PP CP)) unless it is a control: changing TP keeps it right.
    const plan = this.scenario.plan;
    if (!this.controls.includes('dp') && plan.dp !== undefined && plan.dp === this.derivedDp(this.scenario)) delete plan.dp;
    this.build();
    this.update();
  }

  fail(problem) {
    this.wrap.replaceChildren(h('p', { class: 'sc-status error', role: 'alert' },
      h('strong', null, 'Stepcast: '), `this calculator cannot be shown: ${problem}.`));
  }

  gpusPerNode(g) {
    if (g.node) return this.presets.nodes.find((n) => n.id === g.node)?.gpus_per_node;
    return g.gpus_per_node;
  }

  /** The engine's dp when left out: the replica sets' counts, else GPUs (all groups) / (tp pp cp). */
  derivedDp(s) {
    const p = { ...PLAN_DEFAULTS, ...s.plan };
    if (Array.isArray(p.replicas)) return Math.max(1, p.replicas.reduce((a, r) => a + (Number.isInteger(r?.count) ? r.count : 1), 0));
    const gpus = clusterGroups(s.cluster).reduce((a, g) => a + g.nodes * this.gpusPerNode(g), 0);
    const mp = p.tp * p.pp * p.cp;
    return Number.isInteger(gpus) && Number.isInteger(mp) && mp > 0 ? Math.max(1, Math.floor(gpus / mp)) : NaN;
  }

  title(s) {
    if (typeof s.name === 'string' && s.name) return s.name;
    const model = typeof s.model === 'string' ? this.presets.models.find((m) => m.id === s.model)?.name ?? s.model
      : s.model.name ?? 'custom model';
    const cluster = clusterGroups(s.cluster).map((g) => {
      const node = g.node ? (this.presets.nodes.find((n) => n.id === g.node)?.name ?? g.node).replace(/\s*\(.*\)$/, '')
        : `${g.gpus_per_node}-GPU nodes`;
      return `${g.nodes} × ${node}`;
    }).join(' + ');
    return `${model} on ${cluster}`;
  }

  /** The control's value in the scenario, as the input shows it. */
  value(name) {
    const s = this.scenario;
    const kind = CONTROLS[name][1];
    if (kind === 'model') return typeof s.model === 'string' ? s.model : '';
    if (kind === 'node') return groupOf(s).node ?? '';
    if (kind === 'nodes') return groupOf(s).nodes;
    if (kind === 'seq_len') return s.seq_len ?? (typeof s.model === 'string'
      ? this.presets.models.find((m) => m.id === s.model)?.seq_len : s.model.seq_len);
    if (kind === 'tokens') return this.page.tokens === undefined ? '' : billions(this.page.tokens);
    if (kind === 'price') return this.page.price_per_gpu_hour ?? '';
    if (name === 'dp') return s.plan.dp ?? this.derivedDp(s);
    return s.plan[name] ?? PLAN_DEFAULTS[name] ?? '';
  }

  build() {
    const fields = this.controls.map((name) => {
      const [label, kind, extra] = CONTROLS[name];
      const id = `${this.id_}-${name}`;
      const raw = this.value(name);
      const value = typeof raw === 'number' && !Number.isFinite(raw) ? '' : raw;
      let control;
      if (kind === 'check') {
        control = h('input', { id, type: 'checkbox', 'data-control': name });
        control.checked = !!value;
        return h('div', { class: 'sc-field sc-check' }, control, h('label', { for: id }, label));
      }
      if (kind === 'model' || kind === 'node' || kind === 'select') {
        const options = kind === 'model' ? this.presets.models.map((m) => [m.id, m.name])
          : kind === 'node' ? this.presets.nodes.map((n) => [n.id, n.name.replace(/\s*\(.*\)$/, '')])
            : extra.map((o) => [o, o]);
        if (kind === 'model' && value === '') options.unshift(['', `${this.scenario.model.name ?? 'custom model'} (custom)`]);
        if (kind === 'node' && value === '') options.unshift(['', 'custom cluster']);
        control = h('select', { id, 'data-control': name, disabled: value === '' && kind !== 'select' },
          options.map(([v, text]) => h('option', { value: v }, text)));
        control.value = String(value);
      } else {
        const decimal = kind === 'tokens' || kind === 'price';
        control = h('input', { id, type: 'number', min: decimal ? '0' : '1', step: decimal ? 'any' : '1',
          inputmode: decimal ? 'decimal' : 'numeric', 'data-control': name, value: String(value) });
        if (name === 'dp' && value === '') control.placeholder = 'derived';
      }
      return h('div', { class: 'sc-field' }, h('label', { for: id }, label),
        h('span', { class: 'sc-control' }, control, typeof extra === 'string' ? h('span', { class: 'sc-unit' }, extra) : null));
    });
    const metric = (key, label, bar) => h('div', { class: 'sc-metric', 'data-metric': key },
      h('div', { class: 'sc-label' }, label),
      h('div', { class: 'sc-value' }, h('span', { class: 'sc-num' }, '–'), h('span', { class: 'sc-vunit' })),
      bar ? h('div', { class: 'sc-mem', 'aria-hidden': 'true' }, h('span', { class: 'sc-bar' })) : null,
      h('div', { class: 'sc-sub' }));
    this.wrap.replaceChildren(
      h('div', { class: 'sc-head' }, h('span', { class: 'sc-title' })),
      fields.length ? h('div', { class: 'sc-controls' }, fields) : null,
      h('div', { class: 'sc-status', role: 'status', 'aria-live': 'polite', hidden: true }),
      h('div', { class: 'sc-metrics' },
        metric('iteration_time_s', 'Iteration time'), metric('tokens_per_s', 'Throughput'),
        metric('mfu', 'MFU'), metric('memory', 'Memory per GPU', true)),
      h('div', { class: 'sc-foot' },
        h('span', { class: 'sc-brand' }, 'Stepcast estimate'),
        h('a', { class: 'sc-open', href: this.pageBase(), target: '_blank', rel: 'noopener' }, 'Open in Stepcast ↗')));
  }

  pageBase() {
    const attr = this.getAttribute('page');
    if (attr) {
      try {
        const url = new URL(attr, document.baseURI);
        if (url.protocol === 'http:' || url.protocol === 'https:') return url.href.replace(/#.*$/, '');
      } catch { /* fall through to the bundle's page */ }
    }
    return PAGE;
  }

  /** Reads the controls into the scenario; returns the first local problem, or null. */
  read() {
    const s = this.scenario;
    let problem = null;
    for (const el of this.wrap.querySelectorAll('[data-control]')) {
      const name = el.dataset.control;
      const kind = CONTROLS[name][1];
      el.removeAttribute('aria-invalid');
      if (kind === 'check') {
        s.plan[name] = el.checked;
        continue;
      }
      if (kind === 'model' || kind === 'node') {
        if (el.value && kind === 'model') s.model = el.value;
        if (el.value && kind === 'node') groupOf(s).node = el.value;
        continue;
      }
      if (kind === 'select') {
        s.plan[name] = name === 'zero_stage' ? Number(el.value) : el.value;
        continue;
      }
      const raw = el.value.trim();
      const n = Number(raw);
      if (raw === '' || !Number.isFinite(n)) {
        if (name === 'dp' && raw === '') { delete s.plan.dp; continue; }
        if ((kind === 'tokens' || kind === 'price') && raw === '') {
          delete this.page[kind === 'tokens' ? 'tokens' : 'price_per_gpu_hour'];
          continue;
        }
        el.setAttribute('aria-invalid', 'true');
        problem ??= `${CONTROLS[name][0]}: enter a number`;
        continue;
      }
      if (kind === 'nodes') groupOf(s).nodes = n;
      else if (kind === 'seq_len') s.seq_len = n;
      else if (kind === 'tokens' || kind === 'price') Object.assign(this.page, pageSettings(
        kind === 'tokens' ? raw : '', kind === 'price' ? raw : ''));
      else s.plan[name] = n;
    }
    return problem;
  }

  status(kind, ...content) {
    const el = this.$('.sc-status');
    el.className = `sc-status ${kind}`;
    el.replaceChildren(...content);
    el.hidden = !content.length;
  }

  async update() {
    const problem = this.read();
    const s = this.scenario;
    this.$('.sc-title').textContent = this.title(s);
    this.wrap.setAttribute('aria-label', `Stepcast calculator: ${this.title(s)}`);
    if (problem) {
      this.wrap.classList.add('stale');
      this.status('error', problem);
      return;
    }
    const text = JSON.stringify(s);
    const linking = engine.toLink(clone(s), { ...this.page }, this.pageBase(), `${this.id_}:link`).then((r) => {
      if (!r) return;
      const a = this.$('.sc-open');
      this.link = r.link ?? null;
      this.linked = text;
      if (r.link) {
        a.href = r.link;
        a.removeAttribute('aria-disabled');
      } else {
        a.href = this.pageBase();
        a.title = `this plan cannot be written as a link: ${linkMessage(r.error)}`;
      }
    }).catch(() => { /* the estimate below reports a failed engine */ });
    let answer;
    try {
      answer = await engine.estimate(text, this.id_);
    } catch (err) {
      this.status('error', `The engine failed: ${err.message}`);
      return;
    }
    await linking;
    if (!answer) return; // superseded by a newer change
    this.render(answer.result);
    this.dataset.state = answer.result.error ? 'error' : answer.result.fits ? 'ok' : 'oom';
    this.rendered = text;
  }

  render(r) {
    if (r.error) {
      this.wrap.classList.add('stale');
      const path = r.error.path ?? '';
      const controls = [...this.wrap.querySelectorAll('[data-control]')];
      const target = (name) => ({ nodes: 'cluster.nodes', node: 'cluster.node', model: 'model', seq_len: 'seq_len' }[name] ?? `plan.${name}`);
      let marked = controls.filter((el) => path === target(el.dataset.control) || path.startsWith(`${target(el.dataset.control)}.`));
      // DP is derived unless it is a control: its rule is about the controls it comes from.
      if (!marked.length && path === 'plan.dp')
        marked = controls.filter((el) => ['tp', 'pp', 'cp', 'nodes'].includes(el.dataset.control));
      for (const el of marked) el.setAttribute('aria-invalid', 'true');
      this.status('error', h('strong', null, 'Invalid plan: '), r.error.message);
      return;
    }
    this.wrap.classList.remove('stale');
    const worst = r.stages.reduce((a, st) => (st.memory_bytes.total / st.memory_bytes.capacity >
      a.memory_bytes.total / a.memory_bytes.capacity ? st : a));
    const m = worst.memory_bytes;
    // "12.3 s": the number large, the unit small (split at the first space).
    const set = (key, value, shown, sub, bad = false) => {
      const el = this.$(`[data-metric="${key}"]`);
      const cut = shown.indexOf(' ');
      el.dataset.value = String(value);
      el.classList.toggle('bad', bad);
      el.querySelector('.sc-num').textContent = cut < 0 ? shown : shown.slice(0, cut);
      el.querySelector('.sc-vunit').textContent = cut < 0 ? '' : ` ${shown.slice(cut + 1)}`;
      el.querySelector('.sc-sub').textContent = sub;
    };
    const page = this.page;
    const trainS = page.tokens !== undefined ? page.tokens / r.tokens_per_s : NaN;
    const cost = trainS * r.gpus / 3600 * (page.price_per_gpu_hour ?? NaN);
    set('iteration_time_s', r.iteration_time_s, duration(r.iteration_time_s),
      `${r.micro_batches.toLocaleString('en-US')} micro-batches`);
    set('tokens_per_s', r.tokens_per_s, `${Math.round(r.tokens_per_s).toLocaleString('en-US')} tokens/s`,
      Number.isFinite(trainS) ? `${billions(page.tokens)} B tokens: ${duration(trainS)}${Number.isFinite(cost) ? `, ${money(cost)}` : ''}`
        : `on ${r.gpus.toLocaleString('en-US')} GPUs`);
    set('mfu', r.mfu, percent(r.mfu), `HFU ${percent(r.hfu)}`);
    set('memory', m.total, gib(m.total), `of ${gib(m.capacity, 0)}: ${r.fits ? 'fits' : 'does not fit'}`, !r.fits);
    this.$('[data-metric="memory"]').dataset.fits = String(r.fits);
    const bar = this.$('.sc-bar');
    bar.style.width = `${Math.min(100, (100 * m.total) / m.capacity)}%`;
    this.status(r.fits ? 'ok' : 'oom', ...(r.fits ? [] : [h('strong', null, 'Out of memory: '),
      `stage ${worst.index} needs ${gib(m.total)} per GPU, the GPU has ${gib(m.capacity, 0)}.`]));
    this.dispatchEvent(new CustomEvent('stepcast-estimate', {
      detail: { iteration_time_s: r.iteration_time_s, tokens_per_s: r.tokens_per_s, mfu: r.mfu, fits: r.fits,
        memory_bytes: m.total, capacity_bytes: m.capacity },
    }));
  }
}

if (!customElements.get(TAG)) customElements.define(TAG, StepcastCalculator);
