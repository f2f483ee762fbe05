// Types for the Stepcast package: the <stepcast-calculator> element (dist/stepcast-embed.js defines
// it) and the engine module's bindings (dist/assets/stepcast-<hash>.js, a classic script that
// defines createStepcast(), with its WebAssembly). Beside the bindings (wasm/bindings.cpp) it
// declares; `npm pack` copies it to the package's types/stepcast.d.ts (web/scripts/pack-dist.mjs).

/** What the element's "stepcast-estimate" event carries (seconds, tokens/s, fractions, bytes). */
export interface StepcastEstimateDetail {
  iteration_time_s: number;
  tokens_per_s: number;
  mfu: number;
  fits: boolean;
  memory_bytes: number;
  capacity_bytes: number;
}

/** <stepcast-calculator scenario="v=2&model=..." controls="tp,pp,micro_batch" compact> (docs/embed.md) */
export interface StepcastCalculatorElement extends HTMLElement {
  /** The plan on show (the scenario the engine runs), after the reader's changes; its link is the `scenario` attribute's at first. */
  readonly scenario: Record<string, unknown> | undefined;
  /** The scenario text whose estimate is on show. */
  readonly rendered: string | undefined;
  /** The Stepcast link of the plan on show ("Open in Stepcast"; the fragment alone without a page). */
  readonly link: string | null | undefined;
  addEventListener<K extends keyof StepcastCalculatorEventMap>(type: K,
    listener: (this: StepcastCalculatorElement, ev: StepcastCalculatorEventMap[K]) => unknown,
    options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
}

export interface StepcastCalculatorEventMap extends HTMLElementEventMap {
  'stepcast-estimate': CustomEvent<StepcastEstimateDetail>;
}

/** The element's attributes, for JSX and templates. */
export interface StepcastCalculatorAttributes {
  /** The plan, as the fragment of a Stepcast link. */
  scenario?: string;
  /** Comma-separated controls to show: model, node, nodes, gpus_per_node, seq_len, tokens, price, or any plan key (tp, pp, micro_batch, ...). */
  controls?: string;
  /** The full page "Open in Stepcast" goes to, http(s) (default: the Stepcast site the script came from; required with the npm package, which has no page). */
  page?: string;
  /** A smaller layout. */
  compact?: boolean | '';
  /** 'light' or 'dark' (default: the reader's setting). */
  theme?: 'light' | 'dark';
}

declare global {
  interface HTMLElementTagNameMap {
    'stepcast-calculator': StepcastCalculatorElement;
  }
  interface HTMLElementEventMap {
    'stepcast-estimate': CustomEvent<StepcastEstimateDetail>;
  }
  /** Defined by the engine script (dist/assets/stepcast-<hash>.js). */
  function createStepcast(options?: StepcastModuleOptions): Promise<StepcastModule>;
  /** Defined by the tools script (dist/assets/stepcast-tools-<hash>.js). */
  function createStepcastTools(options?: StepcastModuleOptions): Promise<StepcastToolsModule>;
}

/** An engine error: what every binding returns as {"error": StepcastError} (docs/scenario.md, "Errors"). */
export interface StepcastError {
  code: 'parse_error' | 'unknown_key' | 'missing_key' | 'type_error' | 'out_of_range' | 'unknown_preset' |
    'invalid_plan' | 'invalid_model' | 'invalid_cluster' | 'duplicate_key' | 'unsupported' | 'budget_exceeded';
  /** The input it names first ("plan.tp"). */
  path: string;
  /** One line naming the input, its value and the rule. */
  message: string;
  /** The other inputs the rule involves. */
  related?: string[];
  /** Values that would satisfy the rule, in words. */
  hint?: string;
  /** The broken rule's stable id (engine/include/stepcast/rule_ids.h); absent for an error of reading. */
  rule?: string;
  /** The values the rule involves, by the names its table gives ({divisor: 3, dividend: 64, ...}). */
  values?: Record<string, unknown>;
}

/** estimateColumns(): the report with its timeline's events as typed columns. */
export interface StepcastColumns {
  /** The report (its timeline's events left out), or {"error": ...}. */
  json: string;
  /** 6 numbers an event: stage, kind (an index into `kinds`), micro_batch, chunk, start_s, end_s. */
  events?: Float64Array;
  /** 2 numbers an event: replica set, cluster group. */
  placement?: Float64Array;
  kinds?: string[];
}

/**
 * The engine module (createStepcast() resolves to it): every function registered in
 * wasm/bindings.cpp, and no other (tests/wasm/bindings.test.mjs). Each takes and returns JSON
 * text; an error is {"error": StepcastError}.
 */
export interface StepcastModule {
  version(): string;
  /** The report of a scenario (JSON), with its timeline. */
  estimate(scenario: string): string;
  /** The same with options {"report": "full" | "summary", "timeline": boolean}. */
  estimate(scenario: string, options: string): string;
  /** The same report, its timeline's events as typed columns (the page's fast path). */
  estimateColumns(scenario: string): StepcastColumns;
  estimateColumns(scenario: string, options: string): StepcastColumns;
  /** The names of the timeline's event kinds, in the order of their numbers. */
  timelineKinds(): string[];
  /** The scenario with every default and derived value, or {errors: [StepcastError, ...]}. */
  resolve(scenario: string): string;
  /** Every scenario key (path, type, range or choices, default, unit, label, doc) and the plan search's space ("search"). */
  schema(): string;
  /** Every key a report holds, table by table: name, unit, label, doc. */
  reportSchema(): string;
  /** The bundled GPUs, links, nodes, models and training-software profiles. */
  presets(): string;
  /** {link} for {scenario, page?} (JSON) and a base address. */
  toLink(document: string, base: string): string;
  /** {scenario, page} of a Stepcast link. */
  fromLink(url: string): string;
  /** The fastest plans around a scenario: {best: [...], evaluated, rejected, out_of_memory, baseline_s, baseline_error?}. */
  search(scenario: string, top: number): string;
  /** The scenario at other node counts and TP degrees: {base, nodes: [...], tp: [...]} (`stepcast scaling`). */
  scaling(scenario: string): string;
}

/**
 * The tools module (createStepcastTools() resolves to it; stepcast-tools.js and .wasm beside the
 * engine's): what a user's action calls once, every function registered in
 * wasm/tool_bindings.cpp and no other. Each takes and returns JSON text; an error is
 * {"error": StepcastError}.
 */
export interface StepcastToolsModule {
  version(): string;
  /** The traffic matrix: options {level: 'gpu' | 'node' | 'auto'}. */
  traffic(scenario: string, options: string): string;
  /** A Hugging Face config.json (text) as the scenario's custom model. */
  importHfConfig(config: string): string;
  /** A Megatron-LM command line as {scenario, ignored, notes}. */
  importMegatronArgs(commandLine: string): string;
  /** A torchtitan job config (TOML) as {scenario, ignored, notes}: options {node?, nodes?}, as `stepcast import torchtitan --node --nodes`. */
  importTorchtitan(toml: string, options: string): string;
  /** The plan as `stepcast export KIND` writes it: {text}. */
  exportPlan(scenario: string, kind: 'megatron-args' | 'bridge-recipe' | 'torchrun' | 'torchtitan'): string;
  /** A link fitted to nccl-tests output: request {files: [{name, text}], nics_per_node?, gpu?} (output of another GPU than `gpu` refused); {link, checks}. */
  ncclLink(request: string): string;
  /** GEMM efficiencies fitted to a benchmark table: request {text, scenario}; {gemm, gpu, rows, max_time_error, preset}. */
  gemmFit(request: string): string;
  /** A scenario with its measured runs replaced by the scales they fit: {scenario}. */
  compactCalibration(scenario: string): string;
  /** The changes that make an out-of-memory plan fit, fastest first: {fits, fit_fixes: [{change, settings, iteration_time_s, time_change, memory_bytes}]}. */
  fitFixes(scenario: string): string;
  /** How many GPUs for a deadline (`stepcast deadline`): options {tokens, days, nodes?}; {tokens, days, fewest_nodes_at_peak, cheapest, points: [...]}. */
  deadline(scenario: string, options: string): string;
}

export interface StepcastModuleOptions {
  /** The .wasm bytes (Node), instead of fetching them. */
  wasmBinary?: ArrayBuffer | Uint8Array;
  locateFile?: (path: string, prefix: string) => string;
}

export type CreateStepcast = (options?: StepcastModuleOptions) => Promise<StepcastModule>;
export type CreateStepcastTools = (options?: StepcastModuleOptions) => Promise<StepcastToolsModule>;
