// The Traffic card, in Chromium: its heatmap adds up to the communication census (every GPU's
// census applied at every rank: the bytes each operation sends per GPU, nccl-tests' bus factors),
// at the GPU level for the default example and the node level past 1,024 GPUs; the CSV holds one
// row per nonzero cell; the link load integrates to the bytes inside and between nodes; the
// bandwidth chart draws a curve per path and a point per operation; an MoE plan with an
// imbalance shows its all-to-all as a range; two cluster groups with plan.stages get a matrix,
// with plan.replicas the card says why there is none. Its worker ends once the card is off screen.
// Screenshot under build/screenshots/.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { CLI, cliEstimate, cliLink, requireBuilt } from '../wasm/common.mjs';
import { SHOTS, pageScenario, settle, suite, watch } from './helpers.mjs';

requireBuilt(CLI, 'build it with cmake -S . -B build && make -C build stepcast');

const fx = suite({ serviceWorkers: 'block', acceptDownloads: true });

/** Bytes one GPU sends per iteration for a census operation (traffic.h's census_sent_bytes). */
function sent(op) {
  const n = op.group_size;
  const s = op.count * op.bytes;
  switch (op.kind) {
    case 'all_reduce': return (s * 2 * (n - 1)) / n;
    case 'all_gather': case 'reduce_scatter': case 'all_to_all': case 'broadcast': return (s * (n - 1)) / n;
    case 'send_recv': return op.group === 'pp' ? s / 2 : s;
    default: throw new Error(`unknown collective ${op.kind}`);
  }
}

/** The census over every GPU: each stage's GPUs send what the census of one of them says. */
function censusTotal(report) {
  const perStage = report.gpus / report.stages.length;
  return report.stages.reduce((a, st) => a + perStage * st.communication.reduce((b, op) => b + sent(op), 0), 0);
}

async function open(fragment = '', url = null) {
  const p = watch(await fx.context.newPage(), fx.problems);
  await p.goto(url ?? `${fx.site.url}${fragment ? `#${fragment}` : ''}`);
  // (Waits for readiness, not timings: 60 s, as delivery.test.mjs waits. A new page's first
  // matrix loads the tools module too, and under the whole suite's load on CI's 2 cores once
  // took more than 20 s.)
  await p.waitForSelector('#metrics [data-metric="iteration_time_s"]', { timeout: 60000 });
  await settle(p);
  // The matrix is computed once its card is on screen.
  await p.$eval('#traffic-card', (el) => el.scrollIntoView());
  await p.waitForFunction(() => window.__stepcast.traffic?.scenario === window.__stepcast.rendered, null, { timeout: 60000 });
  return p;
}

async function checkTotal(p, level) {
  const shown = await p.evaluate(() => window.__stepcast.traffic);
  const scenario = JSON.stringify(await pageScenario(p));
  const { report } = cliEstimate(scenario, { timeline: false });
  assert.equal(shown.level, level);
  const want = censusTotal(report);
  assert.ok(want > 0);
  assert.ok(Math.abs(shown.heatmapTotal - want) <= 1e-9 * want, `heatmap ${shown.heatmapTotal} vs census ${want}`);
  assert.ok(Math.abs(shown.total - want) <= 1e-9 * want, `total ${shown.total} vs census ${want}`);
  const size = await p.$eval('#traffic canvas', (c) => [c.width, c.height]);
  assert.deepEqual(size, [shown.endpoints, shown.endpoints]);
  // The load strips integrate to the bytes per tier the card states.
  const tier = async (key) => Number(await p.$eval(`[data-traffic="${key}"]`, (el) => el.dataset.value));
  for (const key of ['scale_up', 'scale_out']) {
    const want = await tier(key);
    if (want === 0 && !shown.load[key]) continue;
    assert.ok(Math.abs(shown.load[key].bytes - want) <= 1e-9 * want, `${key} load ${shown.load[key].bytes} vs ${want}`);
  }
  if (shown.load.busiest_nic) assert.ok(shown.load.busiest_nic.bytes <= (await tier('scale_out')) * (1 + 1e-9));
  assert.ok(shown.bandwidth.curves >= 1);
  const ops = report.stages.reduce((a, st) => a + st.communication.filter((op) => op.time_s > 0).length, 0);
  assert.equal(shown.bandwidth.points, ops);
  return shown;
}

describe('traffic card', () => {
  test('computed only once it scrolls into view, then for each edit while it is on screen', async () => {
    const p = watch(await fx.context.newPage(), fx.problems);
    await p.goto(fx.site.url);
    await p.waitForSelector('#metrics [data-metric="iteration_time_s"]', { timeout: 20000 });
    await settle(p);
    await p.fill('#f-global_batch', '1024');
    await settle(p);
    await p.waitForTimeout(300);
    assert.equal(await p.evaluate(() => window.__stepcast.trafficAsked ?? 0), 0, 'nothing asked while the card is off screen');
    await p.$eval('#traffic-card', (el) => el.scrollIntoView());
    await p.waitForFunction(() => window.__stepcast.traffic?.scenario === window.__stepcast.rendered, null, { timeout: 20000 });
    assert.equal(await p.evaluate(() => window.__stepcast.trafficAsked), 1, 'the scenario on show, once');
    await checkTotal(p, 'gpu');
    await p.fill('#f-global_batch', '512');
    await settle(p);
    await p.waitForFunction(() => window.__stepcast.traffic?.scenario === window.__stepcast.rendered, null, { timeout: 20000 });
    assert.equal(await p.evaluate(() => window.__stepcast.trafficAsked), 2, 'an edit while it is on screen');
    // Off screen a second, its worker ends (a WebAssembly memory never shrinks: the worker's end
    // gives it back); an edit meanwhile is asked for when the card is back, in a fresh worker.
    const memory = () => p.evaluate(() => window.__stepcast.engine.memory());
    assert.ok((await memory()).traffic.tools > 0, 'the matrix ran in a worker of its own, in the tools module');
    await p.evaluate(() => window.scrollTo(0, 0));
    await p.waitForFunction(() => window.__stepcast.trafficClosed === 1, null, { timeout: 15000 });
    const closed = await memory();
    assert.equal(closed.traffic, null, 'its worker ended');
    const sum = (m) => (m ? m.engine + m.tools : 0);
    assert.equal(closed.total, sum(closed.estimate) + sum(closed.search));
    await p.fill('#f-global_batch', '1024');
    await settle(p);
    await p.waitForTimeout(300);
    assert.equal(await p.evaluate(() => window.__stepcast.trafficAsked), 2, 'nothing asked while the card is off screen');
    await p.$eval('#traffic-card', (el) => el.scrollIntoView());
    await p.waitForFunction(() => window.__stepcast.traffic?.scenario === window.__stepcast.rendered, null, { timeout: 20000 });
    assert.equal(await p.evaluate(() => window.__stepcast.trafficAsked), 3, 'the edit made off screen, once the card is back');
    await checkTotal(p, 'gpu');
    await p.close();
  });

  test('the default example: GPU x GPU heatmap equals the census; CSV one row per cell', async () => {
    const p = await open();
    const shown = await checkTotal(p, 'gpu');
    assert.equal(shown.endpoints, 64);
    const [download] = await Promise.all([p.waitForEvent('download'), p.click('#traffic-csv')]);
    const csv = await (await download.createReadStream()).toArray();
    const lines = Buffer.concat(csv).toString('utf8').trim().split('\n');
    assert.match(lines[0], /^from,to,tier,.*total_bytes$/);
    assert.equal(lines.length - 1, shown.cells);
    await p.$eval('#traffic-card', (el) => el.scrollIntoView());
    await p.screenshot({ path: join(SHOTS, 'traffic.png') });
    await p.locator('#traffic-card').screenshot({ path: join(SHOTS, 'traffic-card.png') });
    await p.close();
  });

  test('MoE, ep 16 over two nodes, imbalance 1.5: the all-to-all as a range', async () => {
    const p = await open('v=2&model=qwen3-30b-a3b&node=dgx-h100&nodes=2&ep=16&gbs=256&imb=1.5');
    const shown = await checkTotal(p, 'gpu');
    assert.equal(shown.ranges.length, 1);
    assert.match(shown.ranges[0], /^EP all-to-all: expected [\d.]+ GiB per GPU pair, up to [\d.]+ GiB with imbalance 1\.5/);
    assert.ok(shown.load.busiest_nic.bytes > 0);
    const text = await p.$eval('#traffic', (el) => el.textContent);
    assert.ok(text.includes(shown.ranges[0]));
    await p.$eval('#traffic-card', (el) => el.scrollIntoView());
    await p.locator('#traffic-card').screenshot({ path: join(SHOTS, 'traffic-moe.png') });
    await p.close();
  });

  test('two cluster groups: plan.stages places each stage on its group; plan.replicas says why there is no matrix', async () => {
    const cluster = { groups: [{ node: 'dgx-a100', nodes: 1 }, { node: 'dgx-h100', nodes: 1 }], inter_group_link: 'roce-100g' };
    const stages = {
      model: 'llama3-8b', seq_len: 4096, cluster,
      plan: { tp: 8, pp: 2, global_batch: 64, stages: [{ group: 0, layers: 'auto' }, { group: 1, layers: 'auto' }] },
    };
    let made = cliLink(JSON.stringify(stages), { base: fx.site.url });
    assert.equal(made.status, 0, made.stderr);
    let p = await open('', made.link);
    const shown = await checkTotal(p, 'gpu');
    assert.equal(shown.endpoints, 16);
    await p.$eval('#traffic-card', (el) => el.scrollIntoView());
    await p.locator('#traffic-card').screenshot({ path: join(SHOTS, 'traffic-hetero.png') });
    await p.close();
    const replicas = { ...stages, plan: { tp: 8, global_batch: 64, replicas: [{ group: 0, count: 1 }, { group: 1, count: 1 }] } };
    made = cliLink(JSON.stringify(replicas), { base: fx.site.url });
    assert.equal(made.status, 0, made.stderr);
    p = await open('', made.link);
    const none = await p.evaluate(() => window.__stepcast.traffic);
    assert.match(none.error, /^traffic: replica sets \(plan\.replicas\) are not covered/);
    const text = await p.$eval('#traffic', (el) => el.textContent);
    assert.match(text, /^No traffic matrix: replica sets \(plan\.replicas\) are not covered: .* the matrix covers one-group clusters and stages placed on groups \(plan\.stages\)$/);
    await p.close();
  });

  test('2,048 GPUs: the node x node heatmap, still the census', async () => {
    const p = await open('v=2&model=llama3-8b&node=dgx-h100&nodes=256&tp=8&gbs=2048');
    const shown = await checkTotal(p, 'node');
    assert.equal(shown.endpoints, 256);
    await p.close();
  });
});
