// Types for the Stepcast package: the <stepcast-calculator> element (dist/stepcast-embed.js defines
// it) and the engine module's bindings (dist/assets/stepcast-<hash>.js, a classic script that
// defines createStepcast(), with its WebAssembly).

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
  /** The plan, as the fragment of a Stepcast link ("v=2&model=llama3-70b&node=dgx-h100&nodes=8&tp=8&pp=4"). */
  scenario: string | null;
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
  /** The full page "Open in Stepcast" goes to (default: the page of the bundle the script came from). */
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
}

/**
 * The engine module (createStepcast() resolves to it). Every function takes and returns JSON
 * text; an error is {"error": {code, path, message, related?, hint?}}.
 */
export interface StepcastModule {
  version(): string;
  /** The report of a scenario (JSON), with its timeline. */
  estimate(scenario: string): string;
  /** The scenario with every default and derived value, or {errors: [...]}. */
  resolve(scenario: string): string;
  /** Every scenario key: path, type, range or choices, default, unit, label, doc. */
  schema(): string;
  /** The bundled GPUs, links, nodes, models and training-software profiles. */
  presets(): string;
  /** {link} for {scenario, page?} (JSON) and a base address. */
  toLink(document: string, base: string): string;
  /** {scenario, page} of a Stepcast link. */
  fromLink(url: string): string;
  /** The fastest plans around a scenario: {best: [...], evaluated, rejected, out_of_memory, baseline_s}. */
  search(scenario: string, top: number): string;
  /** The traffic matrix: options {level: 'gpu' | 'node'}. */
  traffic(scenario: string, options: string): string;
  timelineKinds(): string[];
}

export interface StepcastModuleOptions {
  /** The .wasm bytes (Node), instead of fetching them. */
  wasmBinary?: ArrayBuffer | Uint8Array;
  locateFile?: (path: string, prefix: string) => string;
}

export type CreateStepcast = (options?: StepcastModuleOptions) => Promise<StepcastModule>;
