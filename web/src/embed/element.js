// <stepcast-calculator>: a live Stepcast calculator for documentation pages. The author adds one
// script and one element:
//
//   <script src="/stepcast-embed.js"></script>
//   <stepcast-calculator scenario="v=2&model=llama3-70b&node=dgx-h100&nodes=8&tp=8&pp=4&gbs=512"
//     controls="tp,pp,micro_batch" compact></stepcast-calculator>
//
// Its attributes, properties, event, CSS parts and custom properties are surface.js's table (the
// npm package's custom-elements.json is written from it). The page's ?embed=1 mode is this element
// too (frame.js); docs/embed.md documents both. Every calculator of a document shares one engine
// (one worker); each has its own request channels, so they never cancel each other. Everything
// lives in a shadow root: the document's styles do not reach in, and these do not leak out, but
// for the parts and the --stepcast-* properties, which a page sets on purpose. The element fires
// "stepcast-estimate" (detail: the report's headline numbers) after each estimate.
//
// Like the full page, a calculator restates no engine rule: controls are built from the schema
// (label, unit, choices), a key the scenario leaves out shows the engine's value (resolve(): DP
// derived from the GPUs unless dp is a control the reader sets), and the engine's errors mark the
// control the reader changed (blame.js).
// For scripts and tests: el.scenario (the plan on show), el.rendered (the scenario text whose
// estimate is on show), el.link (its link, for el.linked), el.dataset.state (ok, oom, error).
import { fullestStage } from '../cards/stages.js';
import { blame } from '../scenario/blame.js';
import { h } from '../ui/dom.js';
import * as engine from '../engine/bridge.js';
import { duration, gib, money, percent } from '../ui/format.js';
import { clusterGroups } from '../scenario/groups.js';
import { billions, linkMessage, linkProblem, pageSettings } from '../scenario/link.js';
import { plainProblem } from '../ui/plain.js';
import { fullName, profile, setFrameworks, shortName } from '../scenario/frameworks.js';
import { applies, choiceLabel, conditional, key, keysOf, options, plainDefault, rule, setSchema } from '../scenario/schema.js';
import css from './embed.css?inline';
import { CSS_PROPERTIES, DEFAULT_CONTROLS, EVENT, TAG, observedAttributes } from './surface.js';

// The full page "Open in Stepcast" goes to without a page attribute: in the Stepcast site's build,
// the site this bundle belongs to (this module lives in assets/; in development, in src/embed/).
// The npm package (vite build --mode package) has no page beside it, and the project documents no
// public site to default to: there the attribute is required, and the element says so.
const PAGE = import.meta.env.MODE === 'package' ? null
  : new URL(/* @vite-ignore */ import.meta.env.DEV ? '../../' : '../', import.meta.url).href;

// Controls that are not plan keys: name -> the scenario path the schema describes it by, and the
// special kinds (model and node menus, the page's tokens in billions and price).
// (A Map: a name comes from the page's `controls` attribute, and "constructor" is not Object's.)
const SPECIAL = new Map(Object.entries({
  model: { path: 'model', kind: 'model' },
  node: { path: 'cluster.node', kind: 'node' },
  nodes: { path: 'cluster.nodes' },
  gpus_per_node: { path: 'cluster.gpus_per_node' },
  seq_len: { path: 'seq_len' },
  tokens: { path: 'page.tokens', kind: 'tokens', unit: 'billion' },
  price: { path: 'page.price_per_gpu_hour', kind: 'price', label: 'Price', unit: '$/GPU-h' },
}));
const CONTROL_TYPES = ['integer', 'number', 'choice', 'boolean'];

/** The control `name` stands for ({name, path, kind, label, unit, type, values}), or null. */
function describe(name) {
  const special = SPECIAL.get(name);
  const k = key(special?.path ?? `plan.${name}`);
  if (!k || (!special && (!['plan', 'advanced'].includes(k.control) || !CONTROL_TYPES.includes(k.type)))) return null;
  const values = options(k);
  const kind = special?.kind ?? (k.type === 'boolean' ? 'check' : values ? 'select' : 'number');
  return { name, path: k.path, kind, label: special?.label ?? k.label ?? name, unit: special?.unit ?? k.unit, type: k.type, values };
}

/** Group 0 of a cluster (the cluster itself when it is one group): what the node controls set. */
const groupOf = (s) => (Array.isArray(s.cluster?.groups) ? s.cluster.groups[0] : s.cluster);
/** The value at a control's path in a scenario ("cluster.nodes": group 0's). */
const at = (s, path) => (path.startsWith('cluster.') ? groupOf(s)?.[path.slice('cluster.'.length)]
  : path.split('.').reduce((o, p) => o?.[p], s));
const samePath = (a, b) => a.replace(/^cluster\.groups\[0\]\./, 'cluster.') === b.replace(/^cluster\.groups\[0\]\./, 'cluster.');
const clone = (x) => JSON.parse(JSON.stringify(x));

/** --sc-NAME: the document's --stepcast-NAME, else the light or dark default (surface.js). */
const themed = (scheme) => CSS_PROPERTIES.map((p) => `${p.name.replace('--stepcast-', '--sc-')}: var(${p.name}, ${p[scheme]});`).join(' ');
const THEME = `.sc { ${themed('light')} }
@media (prefers-color-scheme: dark) { :host(:not([theme=light])) .sc { ${themed('dark')} } }
:host([theme=dark]) .sc { ${themed('dark')} }
`;

let sheet = null;
function styles() {
  if (!sheet && 'adoptedStyleSheets' in Document.prototype) {
    sheet = new CSSStyleSheet();
    sheet.replaceSync(THEME + css);
  }
  return sheet;
}

/** Every name the controls attribute takes, for the notice about one it does not. */
function controlNames() {
  const plan = keysOf('plan').map((k) => k.path.slice('plan.'.length)).filter((name) => !SPECIAL.has(name) && describe(name));
  return [...SPECIAL.keys(), ...plan];
}

let serial = 0;

export class StepcastCalculator extends HTMLElement {
  static get observedAttributes() { return observedAttributes(); }

  constructor() {
    super();
    this.id_ = `sc${++serial}`;
    this.root = this.attachShadow({ mode: 'open' });
    const shared = styles();
    if (shared) this.root.adoptedStyleSheets = [shared];
    else this.root.append(h('style', null, THEME + css));
    this.wrap = h('div', { class: 'sc', part: 'calculator', role: 'group', 'aria-label': 'Stepcast calculator' });
    this.root.append(this.wrap);
    this.generation = 0;
    const changed = (e) => {
      const name = e.target.dataset?.control;
      if (!name) return;
      this.lastChanged = this.read(e.target);
      this.update();
    };
    this.wrap.addEventListener('input', changed);
    this.wrap.addEventListener('change', changed);
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
    const loading = h('p', { class: 'sc-status', part: 'status' }, 'Loading Stepcast…');
    this.wrap.replaceChildren(loading);
    // The engine's download, in percent (every calculator of the page shares the one download).
    const stopLoading = engine.onLoading(({ loaded, total }) => {
      loading.textContent = `Loading Stepcast… ${Math.floor((100 * loaded) / total)} %`;
    });
    let ready;
    let r;
    try {
      ready = await engine.ready();
      r = await engine.fromLink(this.getAttribute('scenario') ?? '');
    } catch (err) {
      if (generation === this.generation) this.fail(`the engine did not load (${err.message})`);
      return;
    } finally {
      stopLoading();
    }
    if (generation !== this.generation) return;
    setSchema(ready.schema);
    setFrameworks(ready.presets);
    this.presets = ready.presets;
    const problem = r.error ? `its scenario could not be read (${linkMessage(r.error)})` : linkProblem(r.scenario, ready.presets);
    if (problem) {
      this.fail(problem);
      return;
    }
    this.scenario = r.scenario;
    this.page = r.page ?? {};
    this.lastChanged = null;
    this.problems = new Map(); // control -> "enter a number"
    const names = (this.getAttribute('controls') ?? DEFAULT_CONTROLS).split(',').map((c) => c.trim()).filter(Boolean);
    this.controls = names.map(describe).filter(Boolean);
    // A misspelt name is the page author's to fix: said where they look, in the element.
    this.unknown = [...new Set(names.filter((c) => !describe(c)))];
    // DP left to the engine (derived) unless it is a control: changing TP keeps it right.
    const plan = this.scenario.plan;
    if (!this.controls.some((c) => c.name === 'dp') && plan.dp !== undefined) {
      const probe = clone(this.scenario);
      delete probe.plan.dp;
      const derived = await engine.resolve(JSON.stringify(probe));
      if (generation !== this.generation) return;
      if (derived.scenario?.plan.dp === plan.dp) delete plan.dp;
    }
    const resolved = await engine.resolve(JSON.stringify(this.scenario));
    if (generation !== this.generation) return;
    this.resolved = resolved.errors ? null : resolved;
    this.build();
    this.update();
  }

  fail(problem) {
    this.wrap.replaceChildren(h('p', { class: 'sc-status error', part: 'status', role: 'alert' },
      h('strong', null, 'Stepcast: '), `this calculator cannot be shown: ${problem}.`));
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

  /**
   * What a control shows: {value} as the scenario sets it, else the engine's value (resolve(); a
   * derived key's as the placeholder of an empty box); while the engine refuses the scenario, the
   * schema's default when it is a plain value, else nothing.
   */
  shown(c) {
    const s = this.scenario;
    if (c.kind === 'model') return { value: typeof s.model === 'string' ? s.model : '' };
    if (c.kind === 'node') return { value: groupOf(s).node ?? '' };
    if (c.kind === 'tokens') return { value: this.page.tokens === undefined ? '' : billions(this.page.tokens) };
    if (c.kind === 'price') return { value: this.page.price_per_gpu_hour ?? '' };
    const mine = at(s, c.path);
    if (mine !== undefined) return { value: mine };
    const engineValue = this.resolved ? at(this.resolved.scenario, c.path) : undefined;
    // A derived key (DP, the sequence length): an empty box leaves it to the engine, whose value
    // shows as the placeholder.
    if (rule(c.path)) return { value: '', placeholder: engineValue === undefined ? '' : String(engineValue) };
    return { value: engineValue ?? plainDefault(c.path) ?? '' };
  }

  build() {
    const fields = this.controls.map((c) => {
      const id = `${this.id_}-${c.name}`;
      const { value, placeholder } = this.shown(c);
      let control;
      if (c.kind === 'check') {
        control = h('input', { id, type: 'checkbox', part: 'input', 'data-control': c.name });
        control.checked = !!value;
        return h('div', { class: 'sc-field sc-check' }, control, h('label', { for: id, part: 'label' }, c.label));
      }
      if (c.kind === 'model' || c.kind === 'node' || c.kind === 'select') {
        const choices = c.kind === 'model' ? this.presets.models.map((m) => [m.id, m.name])
          : c.kind === 'node' ? this.presets.nodes.map((n) => [n.id, n.name.replace(/\s*\(.*\)$/, '')])
            : c.values.map((v) => [String(v), c.path === 'plan.framework' && profile(v) ? shortName(v) : choiceLabel(v)]);
        if (c.kind === 'model' && value === '') choices.unshift(['', `${this.scenario.model.name ?? 'custom model'} (custom)`]);
        if (c.kind === 'node' && value === '') choices.unshift(['', 'custom cluster']);
        control = h('select', { id, part: 'input', 'data-control': c.name, disabled: value === '' && c.kind !== 'select' },
          choices.map(([v, text]) => h('option', { value: v }, text)));
        control.value = String(value);
      } else {
        const decimal = c.type === 'number' || c.kind === 'tokens' || c.kind === 'price';
        const min = key(c.path)?.min;
        control = h('input', { id, part: 'input', type: 'number', min: min === undefined ? undefined : String(min), step: decimal ? 'any' : '1',
          inputmode: decimal ? 'decimal' : 'numeric', 'data-control': c.name, value: String(value), placeholder });
      }
      return h('div', { class: 'sc-field' }, h('label', { for: id, part: 'label' }, c.label),
        h('span', { class: 'sc-control' }, control, c.unit ? h('span', { class: 'sc-unit' }, c.unit) : null));
    });
    const metric = (key_, label, bar) => h('div', { class: 'sc-metric', part: 'metric', 'data-metric': key_ },
      h('div', { class: 'sc-label' }, label),
      h('div', { class: 'sc-value', part: 'value' }, h('span', { class: 'sc-num' }, '–'), h('span', { class: 'sc-vunit' })),
      bar ? h('div', { class: 'sc-mem', 'aria-hidden': 'true' }, h('span', { class: 'sc-bar' })) : null,
      h('div', { class: 'sc-sub' }));
    const quote = (name) => `“${name}”`;
    const unknown = this.unknown.length ? h('p', { class: 'sc-notice', part: 'notice', 'data-notice': 'controls' },
      h('strong', null, `Unknown control${this.unknown.length > 1 ? 's' : ''} `), this.unknown.map(quote).join(', '),
      ` (left out). The controls attribute takes: ${controlNames().join(', ')}.`) : null;
    const page = this.pageBase();
    // (replaceChildren writes a null as the text "null": the parts left out are filtered out.)
    this.wrap.replaceChildren(...[
      h('div', { class: 'sc-head', part: 'header' }, h('span', { class: 'sc-title' }), ' ', h('span', { class: 'sc-software' })),
      unknown,
      fields.length ? h('div', { class: 'sc-controls', part: 'controls' }, fields) : null,
      h('div', { class: 'sc-status', part: 'status', role: 'status', 'aria-live': 'polite', hidden: true }),
      h('div', { class: 'sc-metrics', part: 'metrics' },
        metric('iteration_time_s', 'Iteration time'), metric('tokens_per_s', 'Throughput'),
        metric('mfu', 'MFU'), metric('memory', 'Memory per GPU', true)),
      h('div', { class: 'sc-foot', part: 'footer' },
        h('span', { class: 'sc-brand' }, 'Stepcast estimate'),
        page.href ? h('a', { class: 'sc-open', part: 'open-link', href: page.href, target: '_blank', rel: 'noopener' }, 'Open in Stepcast ↗')
          : h('p', { class: 'sc-notice', part: 'notice', 'data-notice': 'page' }, page.problem)),
    ].filter(Boolean));
  }

  /** Shows the engine's values in the controls of keys the scenario leaves out. */
  refresh() {
    for (const el of this.wrap.querySelectorAll('[data-control]')) {
      const c = this.controls.find((x) => x.name === el.dataset.control);
      if (!c || this.problems.has(el)) continue;
      const { value, placeholder } = this.shown(c);
      if (el.type === 'checkbox') {
        if (el.checked !== !!value) el.checked = !!value;
      } else if (el.value !== String(value) && !(el.type === 'number' && el.value !== '' && Number(el.value) === Number(value))) {
        el.value = String(value);
      }
      if (placeholder !== undefined && el.placeholder !== placeholder) el.placeholder = placeholder;
    }
  }

  /** Names the training software the estimate assumes (the plan's, else the engine's default). */
  software() {
    const id = this.scenario.plan?.framework ?? this.resolved?.scenario.plan.framework ?? plainDefault('plan.framework');
    const el = this.$('.sc-software');
    if (!el || !id) return;
    const text = `· ${shortName(id)}`;
    if (el.textContent !== text) el.textContent = text;
    el.title = `Training software: ${fullName(id)}`;
  }

  /**
   * The full page "Open in Stepcast" goes to: {href} from the page attribute, else the site's page
   * of this bundle; {href: null, problem} when there is none to go to (the npm package without the
   * attribute, or an attribute that is no http(s) address).
   */
  pageBase() {
    const attr = this.getAttribute('page');
    if (attr) {
      try {
        const url = new URL(attr, document.baseURI);
        if (url.protocol === 'http:' || url.protocol === 'https:') return { href: url.href.replace(/#.*$/, '') };
      } catch { /* said below */ }
      if (!PAGE) return { href: null, problem: `“Open in Stepcast” needs page="…" to be an http(s) address of a Stepcast page, not “${attr}”.` };
    }
    if (PAGE) return { href: PAGE };
    return { href: null, problem: '“Open in Stepcast” needs the address of a Stepcast page: add page="https://…/" to this element.' };
  }

  /** Puts the value of control `el` into the scenario; returns the path it sets. */
  read(el) {
    const s = this.scenario;
    const c = this.controls.find((x) => x.name === el.dataset.control);
    this.problems.delete(el);
    el.removeAttribute('aria-invalid');
    // A cluster control sets group 0 (the cluster itself when it is one group).
    const inCluster = c.path.startsWith('cluster.');
    const path = inCluster && Array.isArray(s.cluster?.groups) ? `cluster.groups[0].${c.name}` : c.path;
    if (c.kind === 'check') s.plan[c.name] = el.checked;
    else if (c.kind === 'model') { if (el.value) s.model = el.value; }
    else if (c.kind === 'node') { if (el.value) groupOf(s).node = el.value; }
    else if (c.kind === 'select') s.plan[c.name] = c.type === 'integer' ? Number(el.value) : el.value;
    else {
      const raw = el.value.trim();
      const n = Number(raw);
      const target = c.kind === 'tokens' || c.kind === 'price' ? null : inCluster ? groupOf(s)
        : c.path === 'seq_len' ? s : s.plan;
      if (raw === '' && (rule(c.path) || key(c.path)?.default === null)) {
        // Empty: left to the engine (a derived key, or a page setting not given).
        if (target) delete target[c.name];
        else delete this.page[c.kind === 'tokens' ? 'tokens' : 'price_per_gpu_hour'];
      } else if (raw === '' || !Number.isFinite(n)) {
        this.problems.set(el, `${c.label}: enter a number`);
      } else if (target) {
        target[c.name] = n;
      } else {
        Object.assign(this.page, pageSettings(c.kind === 'tokens' ? raw : '', c.kind === 'price' ? raw : ''));
      }
    }
    return path;
  }

  status(kind, ...content) {
    const el = this.$('.sc-status');
    el.className = `sc-status ${kind}`;
    el.replaceChildren(...content);
    el.hidden = !content.length;
  }

  /**
   * Leaves out of the scenario the keys that mean nothing for it (the schema's "needs": EP for a
   * dense model) and hides their controls, as the full page does (form/needs.js).
   */
  prune() {
    const s = this.scenario;
    const view = () => ({ ...s, model: typeof s.model === 'string' ? this.presets.models.find((m) => m.id === s.model) : s.model });
    for (const k of conditional()) {
      if (applies(k, view())) continue;
      const parts = k.path.split('.');
      const parent = parts.slice(0, -1).reduce((o, p) => (o !== null && typeof o === 'object' ? o[p] : undefined), s);
      if (parent !== null && typeof parent === 'object') delete parent[parts[parts.length - 1]];
    }
    for (const el of this.wrap.querySelectorAll('[data-control]')) {
      const c = this.controls.find((x) => x.name === el.dataset.control);
      const field = el.closest('.sc-field');
      const hide = !applies(key(c.path), view());
      if (field && field.hidden !== hide) field.hidden = hide;
    }
  }

  async update() {
    this.prune();
    const s = this.scenario;
    this.$('.sc-title').textContent = this.title(s);
    this.software();
    this.wrap.setAttribute('aria-label', `Stepcast calculator: ${this.title(s)}`);
    if (this.problems.size) {
      for (const el of this.problems.keys()) el.setAttribute('aria-invalid', 'true');
      this.wrap.classList.add('stale');
      this.status('error', [...this.problems.values()][0]);
      return;
    }
    const text = JSON.stringify(s);
    const base = this.pageBase().href;
    // Without a page to open, el.link is the link's fragment ("#v=3&..."): the plan, for scripts.
    const linking = engine.toLink(clone(s), { ...this.page }, base ?? '', `${this.id_}:link`).then((r) => {
      if (!r) return;
      const a = this.$('.sc-open');
      this.link = r.link ?? null;
      this.linked = text;
      if (!a) return;
      if (r.link) {
        a.href = r.link;
        a.removeAttribute('aria-disabled');
      } else {
        a.href = base;
        a.title = `this plan cannot be written as a link: ${linkMessage(r.error)}`;
      }
    }).catch(() => { /* the estimate below reports a failed engine */ });
    let answer;
    try {
      answer = await engine.run(text, this.id_, { timeline: false }); // (the calculator draws no timeline)
    } catch (err) {
      this.status('error', `The engine failed: ${err.message}`);
      return;
    }
    await linking;
    if (!answer || text !== JSON.stringify(this.scenario)) return; // superseded by a newer change
    this.resolved = answer.resolved;
    this.refresh();
    this.software();
    if (answer.report) this.render(answer.report);
    else this.refuse(answer.errors);
    this.dataset.state = !answer.report ? 'error' : answer.report.fits ? 'ok' : 'oom';
    this.rendered = text;
  }

  /** The engine's errors: every message in the status line, each marking the control it belongs to. */
  refuse(engineErrors) {
    const errors = engineErrors.map((e) => plainProblem(e));
    this.wrap.classList.add('stale');
    const controls = [...this.wrap.querySelectorAll('[data-control]')];
    const controlOf = (path) => controls.find((el) => {
      const c = this.controls.find((x) => x.name === el.dataset.control);
      return samePath(c.path, path) && !(el.value === '' && rule(c.path));
    });
    for (const el of controls) el.removeAttribute('aria-invalid');
    for (const e of errors) {
      const target = controlOf(blame(e, { lastChanged: this.lastChanged, editable: (p) => !!controlOf(p), same: samePath }));
      target?.setAttribute('aria-invalid', 'true');
    }
    const hints = [...new Set(errors.map((e) => e.hint).filter(Boolean))];
    this.status('error', h('strong', null, 'Invalid plan: '), errors.map((e) => e.message).join('; '),
      hints.length ? ` (try: ${hints.join('; ')})` : '');
  }

  render(r) {
    this.wrap.classList.remove('stale');
    for (const el of this.wrap.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
    const worst = fullestStage(r);
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
    // Bubbles (and leaves the shadow root): a documentation page can listen once on document.
    this.dispatchEvent(new CustomEvent(EVENT, {
      bubbles: true, composed: true,
      detail: { iteration_time_s: r.iteration_time_s, tokens_per_s: r.tokens_per_s, mfu: r.mfu, fits: r.fits,
        memory_bytes: m.total, capacity_bytes: m.capacity },
    }));
  }
}

if (!customElements.get(TAG)) customElements.define(TAG, StepcastCalculator);
