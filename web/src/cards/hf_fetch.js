// A model's config.json from the Hugging Face hub, by its id, on the user's click (Import, "Fetch
// and import"): the one request the page makes off its own origin (the Content-Security-Policy
// allows https://huggingface.co for it, web/scripts/csp.mjs; the footer says so). The text goes
// into the paste box and is imported as a paste is, so the verdict shows in the same place.
import { MAX_FILE_BYTES } from '../app/drop.js';
import { $ } from '../ui/dom.js';

// A hub id: an owner and a name (letters, digits, '-', '_', '.'), as the hub allows them.
const ID = /^[A-Za-z0-9][\w.-]{0,95}\/[A-Za-z0-9][\w.-]{0,95}$/;
export const HUB = 'https://huggingface.co';

/** The config.json address of a hub id, or null for text that is not one. */
export function configUrl(id) {
  const trimmed = id.trim();
  return ID.test(trimmed) && !trimmed.includes('..') ? `${HUB}/${trimmed}/resolve/main/config.json` : null;
}

function say(kind, text) {
  const box = $('#import-status');
  box.className = `import-status ${kind}`;
  box.textContent = text;
  box.hidden = false;
}

/**
 * Fetches the config.json of the id in #hf-id and imports it (`importPasted()`: the paste box's
 * import). Offline, a gated or missing model, or an answer that is not JSON: said beside the box.
 */
export async function fetchAndImport(importPasted) {
  const id = $('#hf-id').value.trim();
  const url = configUrl(id);
  if (!url) return say('error', `“${id.slice(0, 80)}” is not a Hugging Face model id: owner/name, as meta-llama/Llama-3.1-8B.`);
  say('busy', `Fetching ${id}'s config.json from huggingface.co…`);
  let response;
  try {
    response = await fetch(url, { credentials: 'omit', referrerPolicy: 'no-referrer' });
  } catch {
    return say('error', `huggingface.co could not be reached (offline?): download ${id}'s config.json and paste or drop it here.`);
  }
  if (response.status === 401 || response.status === 403) {
    return say('error', `${id} is gated on huggingface.co: accept its license there, download its config.json and paste or drop it here.`);
  }
  if (response.status === 404) return say('error', `huggingface.co has no model ${id} (or it has no config.json).`);
  if (!response.ok) return say('error', `huggingface.co answered ${response.status} for ${id}'s config.json.`);
  const text = await response.text();
  if (text.length > MAX_FILE_BYTES) return say('error', `${id}'s config.json is over 1 MiB: not a model configuration.`);
  $('#import-text').value = text;
  return importPasted();
}
