// Files dropped on the page go where a user would paste them: a Hugging Face config.json, a
// Megatron-LM launch script or a torchtitan job config into Import (the custom model, or the
// model and plan), nccl-tests output or a GEMM table into Calibrate to my cluster, then the same
// button as a paste, so the verdict (or the reason it was refused) shows where it always does. One
// file at a time, read only up to MAX_FILE_BYTES: a file larger than any of these is refused
// before it is read (issue 38).
import { $ } from '../ui/dom.js';

/** The largest file the page reads as a config, script, nccl-tests output or GEMM table (also a fetched config.json). */
export const MAX_FILE_BYTES = 1 << 20;

/**
 * What a file's text is, by its content (a name says little: "config.json", "run.sh", "out.txt"):
 * [textarea, button] of the place it goes.
 */
export function dropTarget(text) {
  if (/^\s*\{/.test(text)) return ['#import-text', '#import-go'];
  if (/^#\s*nThread\b|^#\s+size\s+count\s+type|\bbusbw\b/m.test(text)) return ['#cal-nccl', '#cal-nccl-fit'];
  if (/^\s*m\s*,\s*n\s*,\s*k\b/i.test(text)) return ['#cal-gemm', '#cal-gemm-fit'];
  return ['#import-text', '#import-go'];
}

function say(text) {
  const el = $('#drop-status');
  el.textContent = text;
  el.hidden = !text;
}

async function dropped(event) {
  event.preventDefault();
  document.body.classList.remove('dropping');
  const files = [...(event.dataTransfer?.files ?? [])];
  if (!files.length) return;
  if (files.length > 1) return say(`Drop one file at a time (${files.length} dropped).`);
  const [file] = files;
  if (file.size > MAX_FILE_BYTES) {
    return say(`${file.name} is ${(file.size / 2 ** 20).toFixed(1)} MiB: a config.json, a launch script, ` +
      'nccl-tests output or a GEMM table is far smaller; nothing was read.');
  }
  say('');
  const text = await file.text();
  const [area, button] = dropTarget(text);
  const box = $(area);
  box.closest('details')?.setAttribute('open', '');
  box.value = text;
  box.dispatchEvent(new Event('input', { bubbles: true }));
  box.scrollIntoView({ block: 'center' });
  $(button).click();
}

/** Listens for files dragged over and dropped anywhere on the page. */
export function initDrop() {
  const files = (event) => [...(event.dataTransfer?.types ?? [])].includes('Files');
  window.addEventListener('dragover', (event) => {
    if (!files(event)) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = 'copy';
    document.body.classList.add('dropping');
  });
  window.addEventListener('dragleave', (event) => {
    if (!event.relatedTarget) document.body.classList.remove('dropping');
  });
  window.addEventListener('drop', dropped);
}
