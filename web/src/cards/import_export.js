// Import and export, through the engine (the same code as `stepcast import` and `stepcast export`):
// the plan on show as Megatron-LM arguments, a Megatron-Bridge recipe override or a torchrun line,
// to copy or download; a pasted Hugging Face config.json becomes the custom model (cluster and plan
// kept), a pasted Megatron-LM command line the model and plan (the cluster its torchrun prefix
// gives, else the one on show), with the flags the engine does not model listed, never dropped
// silently; a model's config.json can also come from the Hugging Face hub by its id (hf_fetch.js).
// Problems show beside the paste box. Loaded on the card's first click (app/main.js):
// no first paint needs it.
import { $, fill, h } from '../ui/dom.js';
import { copy, save } from '../ui/download.js';
import * as engine from '../engine/bridge.js';
import { fetchAndImport } from './hf_fetch.js';

// The file each export downloads as (its button is in index.html: data-export).
const KINDS = {
  'megatron-args': { file: 'megatron-args.sh' },
  'bridge-recipe': { file: 'bridge-recipe.py' },
  torchrun: { file: 'torchrun.sh' },
  torchtitan: { file: 'torchtitan.toml' },
};

let exported = null; // {kind, text}

function say(kind, ...content) {
  const box = $('#import-status');
  box.className = `import-status ${kind}`;
  box.setAttribute('role', kind === 'error' ? 'alert' : 'status');
  // (fill skips the parts left out: null, false. replaceChildren wrote them as the text "null".)
  fill(box, ...content);
  box.hidden = !box.hasChildNodes();
}

async function exportAs(kind, current) {
  const r = await engine.exportPlan(JSON.stringify(current()), kind);
  const pre = $('#export-text');
  if (r.error) {
    pre.textContent = `This plan cannot be exported: ${r.error.message}`;
    exported = null;
  } else {
    pre.textContent = r.text;
    exported = { kind, text: r.text };
  }
  pre.hidden = false;
  pre.dataset.kind = kind;
  $('#export-tools').hidden = !exported;
}

/**
 * Which importer a pasted text is for: a JSON object is a config.json; a text with a line that
 * opens a TOML table ("[parallelism", closed or not: a broken config is still one, and its error
 * TOML's) or sets a key with blanks around "=" ("seq_len = 8192") a torchtitan job config;
 * anything else a command line (a shell's tests start "[ " or "[[ ", its variables "NAME=value").
 */
export const importKind = (text) => (/^\s*\{/.test(text) ? 'hf-config'
  : /^[ \t]*(\[\[?[A-Za-z_]|[A-Za-z_][\w.-]*[ \t]+=[ \t])/m.test(text) ? 'torchtitan' : 'megatron-args');

/**
 * A torchtitan job config, on the node preset on show (DGX H100 for a custom cluster): its
 * degrees say how many nodes, or, where its shard degree is -1 (the ranks the others leave), the
 * node count on show does.
 */
async function importTorchtitan(text, current) {
  const cluster = current().cluster ?? {};
  const node = typeof cluster.node === 'string' ? cluster.node : undefined;
  let r = await engine.importTorchtitan(text, { node });
  if (r.error?.path === 'parallelism.data_parallel_shard_degree' && Number.isInteger(cluster.nodes)) {
    r = await engine.importTorchtitan(text, { node, nodes: cluster.nodes });
  }
  return r;
}

async function importText(current, open) {
  const text = $('#import-text').value;
  say('busy', 'Reading the pasted text…'); // not the previous paste's verdict meanwhile
  if (!text.trim()) {
    say('error', 'Paste a Hugging Face config.json or a Megatron-LM command line first.');
    return;
  }
  if (importKind(text) === 'hf-config') {
    const model = await engine.importHfConfig(text);
    if (model.error) {
      say('error', h('strong', null, 'Not a config.json this page can read: '), model.error.message);
      return;
    }
    const before = current();
    await open({ ...before, model });
    // (The engine names the model "imported <architecture>": said once, "Imported Qwen3MoeForCausalLM".)
    const name = model.name?.replace(/^imported /, '') ?? 'the model';
    // A config's context is what the model serves (Qwen3: 40,960 tokens), seldom what it was
    // pre-trained at (4,096 for most of its tokens): without a sequence length of the user's, say
    // so and offer the usual one.
    const long = before.seq_len === undefined && model.seq_len > 8192;
    const short = h('button', { type: 'button', class: 'link' }, 'Train at 4,096 tokens');
    short.addEventListener('click', () => open({ ...current(), seq_len: 4096 }).then(() =>
      say('ok', h('strong', null, `Imported ${name}`), ', trained at 4,096 tokens.')));
    // What the engine could not model of it ("QK-Norm is not modelled."), said, not dropped.
    say('ok', h('strong', null, `Imported ${name}`), ' as a custom model; the cluster and the plan are as they were.',
      model.notes ? h('span', { class: 'import-notes' }, ` ${model.notes}`) : null,
      ...(long ? [` It trains at the config's context, ${model.seq_len.toLocaleString('en-US')} tokens. `, short] : []));
    return;
  }
  const toml = importKind(text) === 'torchtitan';
  const r = toml ? await importTorchtitan(text, current) : await engine.importMegatronArgs(text);
  if (r.error) {
    say('error', h('strong', null, toml ? 'Not a torchtitan job config this page can read: ' : 'Not a command line this page can read: '), r.error.message);
    return;
  }
  const scenario = { ...r.scenario, cluster: r.scenario.cluster ?? current().cluster };
  await open(scenario);
  const ignored = r.ignored ?? [];
  // The importer's notes on the cluster are the command line's ("--node chooses another", "add
  // \"cluster\" before estimating"): the page says where the cluster came from in its own words.
  const notes = (r.notes ?? []).filter((n) => toml || !n.startsWith('cluster:'));
  const c = r.scenario.cluster;
  say('ok', h('strong', null, 'Imported the model and the plan'),
    toml ? ` of the torchtitan job config, on ${c.nodes.toLocaleString('en-US')} ${c.node} nodes.`
      : c ? ` and the cluster from the launch line: ${c.nodes.toLocaleString('en-US')} nodes, as torchrun starts them; ` +
        'the node itself is assumed (choose the one the job runs on under Cluster).'
        : '; the cluster is the one that was on show.',
    notes.length ? h('span', { class: 'import-notes' }, ` ${notes.join(' ')}`) : null,
    ignored.length ? h('span', { class: 'import-ignored' }, ` Not modelled, so not imported: ${ignored.join(', ')}.`) : null);
}

/**
 * A click on one of the card's buttons (index.html), the first loading this module. `current()`:
 * the scenario on show (an object); `open(scenario)`: shows a scenario (a new history entry),
 * resolving when the form holds it.
 */
export function click(button, current, open) {
  if (button.dataset.export) exportAs(button.dataset.export, current);
  else if (button.id === 'copy-export' && exported) copy(button, exported.text);
  else if (button.id === 'download-export' && exported) save(KINDS[exported.kind].file, exported.text);
  else if (button.id === 'import-go') importText(current, open);
  else if (button.id === 'hf-fetch') fetchAndImport(() => importText(current, open));
}
