// What <stepcast-calculator> offers a documentation page: its attributes, properties, events, CSS
// parts and custom properties. One table, and every reader derives from it: the element
// (observedAttributes), the Custom Elements Manifest the npm package carries
// (scripts/custom-elements.mjs writes custom-elements.json from it), and the tests, which check it
// against what the element really observes, renders (part=) and styles (var(--stepcast-*) in
// embed.css). Plain data: Node imports it too.

export const TAG = 'stepcast-calculator';
export const CLASS_NAME = 'StepcastCalculator';
export const EVENT = 'stepcast-estimate';
export const DEFAULT_CONTROLS = 'tp,pp,micro_batch';

export const SUMMARY = 'A live Stepcast calculator: the iteration time, throughput, MFU and memory per GPU of a ' +
  'training plan, estimated in the reader\'s browser (WebAssembly in a worker), with the inputs the page chooses.';

/**
 * `observed`: a change re-reads the calculator (attributeChangedCallback); the others are styles
 * only (:host([compact]), :host([theme=dark]) in embed.css).
 */
export const ATTRIBUTES = [
  { name: 'scenario', type: 'string', observed: true,
    description: 'The plan: a Stepcast link, or its fragment ("v=3&..." or "#v=3&..."); `stepcast link` and the page\'s Copy link give one.' },
  { name: 'controls', type: 'string', default: `"${DEFAULT_CONTROLS}"`, observed: true,
    description: 'The inputs shown, comma-separated: model, node, nodes, gpus_per_node, seq_len, tokens, price, or ' +
      'any plan key of the engine\'s schema (tp, pp, dp, cp, vpp, micro_batch, global_batch, recompute, precision, ...). ' +
      'An unknown name is shown as a notice in the element.' },
  { name: 'compact', type: 'boolean', observed: false, description: 'A tighter layout with smaller numbers.' },
  { name: 'theme', type: "'light' | 'dark'", observed: false,
    description: 'Pins the colour scheme; default: the reader\'s prefers-color-scheme.' },
  { name: 'page', type: 'string', observed: true,
    description: 'The full Stepcast page "Open in Stepcast" goes to (http or https). Default: the page of the Stepcast ' +
      'site the script came from; the npm package has no page, so there it is required (the element says so).' },
];

/** Read-only properties for scripts and tests (set by the element, never read back from outside). */
export const PROPERTIES = [
  { name: 'scenario', type: 'object | undefined', description: 'The plan on show (the scenario JSON the engine runs), after the reader\'s changes.' },
  { name: 'rendered', type: 'string | undefined', description: 'The scenario text whose estimate is on show.' },
  { name: 'link', type: 'string | null | undefined', description: 'The Stepcast link of the plan on show ("Open in Stepcast").' },
];

export const EVENTS = [
  { name: EVENT, type: 'CustomEvent<StepcastEstimateDetail>',
    description: 'After each estimate; bubbles out of the shadow root. detail: iteration_time_s, tokens_per_s, mfu, ' +
      'fits, memory_bytes, capacity_bytes (seconds, tokens/s, fractions, bytes).' },
];

const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif';

/** part="..." names, for ::part() rules in the document. */
export const PARTS = [
  { name: 'calculator', description: 'The whole calculator (background, border, radius, padding).' },
  { name: 'header', description: 'The title line: the model, the cluster and the training software.' },
  { name: 'controls', description: 'The grid of inputs.' },
  { name: 'label', description: 'Each input\'s label.' },
  { name: 'input', description: 'Each number box, menu and checkbox.' },
  { name: 'status', description: 'The line that says what is wrong: an invalid plan, out of memory, a failed engine.' },
  { name: 'metrics', description: 'The grid of results.' },
  { name: 'metric', description: 'One result: iteration time, throughput, MFU, memory per GPU.' },
  { name: 'value', description: 'A result\'s number and unit.' },
  { name: 'footer', description: 'The line with "Open in Stepcast".' },
  { name: 'open-link', description: 'The "Open in Stepcast" link.' },
  { name: 'notice', description: 'A message about the element\'s own attributes: an unknown control, a missing page.' },
];

/**
 * Custom properties a document sets on the element or an ancestor. Each has a light and a dark
 * default (the element picks by `theme` or prefers-color-scheme); a value set wins in both. The
 * defaults are the element's own palette (embed.css), chosen for WCAG AA contrast on each other.
 */
export const CSS_PROPERTIES = [
  { name: '--stepcast-background', syntax: '<color>', light: '#ffffff', dark: '#161b22', description: 'The calculator\'s background.' },
  { name: '--stepcast-text', syntax: '<color>', light: '#161a21', dark: '#e6e9ee', description: 'Text and numbers.' },
  { name: '--stepcast-muted', syntax: '<color>', light: '#5a6472', dark: '#9aa4b2', description: 'Labels, units and secondary lines.' },
  { name: '--stepcast-border', syntax: '<color>', light: '#d5dbe3', dark: '#2d3440', description: 'Borders of the calculator, inputs and results.' },
  { name: '--stepcast-input-background', syntax: '<color>', light: '#ffffff', dark: '#0f1319', description: 'Number boxes and menus.' },
  { name: '--stepcast-accent', syntax: '<color>', light: '#1d4ed8', dark: '#6d9bff', description: 'The link, focus ring, checkboxes and memory bar.' },
  { name: '--stepcast-track', syntax: '<color>', light: '#e8ecf1', dark: '#232a35', description: 'The memory bar\'s empty part.' },
  { name: '--stepcast-error', syntax: '<color>', light: '#c01b1b', dark: '#ff7070', description: 'Invalid inputs, out-of-memory results and their messages.' },
  { name: '--stepcast-error-background', syntax: '<color>', light: '#fdecec', dark: '#3b1618', description: 'Behind an error message or an out-of-memory result.' },
  { name: '--stepcast-font-family', syntax: '*', light: FONT, dark: FONT, description: 'The calculator\'s font.' },
  { name: '--stepcast-radius', syntax: '<length>', light: '10px', dark: '10px', description: 'The calculator\'s corner radius.' },
];

/** The attributes whose change re-reads the calculator. */
export const observedAttributes = () => ATTRIBUTES.filter((a) => a.observed).map((a) => a.name);
