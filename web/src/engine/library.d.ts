// Types of `stepcast-web/engine` (library.js), the engine as an ES module for Node and browsers.
// `npm pack` copies this file to the package's types/engine.d.ts, beside types/stepcast.d.ts
// (wasm/stepcast.d.ts), which declares the engine's error and modules.
import type { StepcastError as EngineError, StepcastModule, StepcastToolsModule } from './stepcast.js';

/** A scenario: the object (docs/scenario.md) or its JSON text. */
export type Scenario = Record<string, unknown> | string;

/** Rejects every function below on an engine error: the engine's message, every problem it listed. */
export declare class StepcastError extends Error {
  name: 'StepcastError';
  errors: EngineError[];
  /** The first problem's code and path. */
  code: EngineError['code'] | undefined;
  path: string | undefined;
}

/** `stepcast estimate --format json`: the report (docs/scenario.md, "Report"), fit_fixes when the plan does not fit. */
export function estimate(scenario: Scenario, options?: { report?: 'full' | 'summary'; timeline?: boolean }): Promise<Record<string, any>>;
/** `stepcast search --top N --format json`: {best, evaluated, rejected, out_of_memory, baseline_s, baseline_error?}. */
export function search(scenario: Scenario, options?: { top?: number }): Promise<Record<string, any>>;
/** `stepcast resolve --format json`: the scenario with every default and derived value. */
export function resolve(scenario: Scenario): Promise<Record<string, any>>;
/** {scenario, page} of a Stepcast link or its fragment. */
export function fromLink(url: string): Promise<{ scenario: Record<string, any>; page: Record<string, any> }>;
/** The link of a scenario on the page at `base` ('' for the fragment alone). */
export function toLink(scenario: Scenario, base: string, page?: { tokens?: number; price_per_gpu_hour?: number }): Promise<{ link: string; left_out: string[] }>;
/** The engine's version. */
export function version(): Promise<string>;
/** The engine's module itself: every binding, JSON text in and out. */
export function load(): Promise<StepcastModule>;
/** The tools module: imports, exports, fits, the traffic matrix. */
export function loadTools(): Promise<StepcastToolsModule>;
