// Input events to the scenario: each control the form builds registers what it does to the state
// (on(el, fn)); one listener on the form runs it for every input and change event, then tells the
// page (which re-renders the form and asks the engine). Buttons register on click.
const handlers = new WeakMap();

/** Registers `fn(el, event)` as what a change of `el` does to the state; returns el. */
export function on(el, fn) {
  handlers.set(el, fn);
  return el;
}

let changed = () => {};

/** Listens on `form` (input and change events) and calls `onChange(timeStamp)` after each handled one. */
export function listen(form, onChange) {
  changed = onChange;
  const handle = (e) => {
    const fn = handlers.get(e.target);
    if (!fn) return;
    fn(e.target, e);
    changed(e.timeStamp || performance.now());
  };
  form.addEventListener('input', handle);
  form.addEventListener('change', handle);
}

/**
 * A button: `fn()` changes the state, then the page re-renders and asks the engine; `after()`
 * runs on the re-rendered form (to move the focus).
 */
export function onClick(button, fn, after) {
  button.addEventListener('click', (e) => {
    fn(e);
    changed(e.timeStamp || performance.now());
    after?.();
  });
  return button;
}

/** Tells the page the state changed outside an event of the form (a plan applied from the search). */
export const notify = () => changed(performance.now());
