// The timeline card's rows (web/src/cards/timeline_chart.js) on hand-made schedules: busy and idle
// time per stage, and the steady state drawn as one band whose waiting time is the stage's, so that
// the picture's hatched time is the idle share printed beside it.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { aggregate, layout } from '../../web/src/cards/timeline_chart.js';
import { KINDS } from '../../web/src/engine/kinds.js';

const F = KINDS.indexOf('forward');
const B = KINDS.indexOf('backward');
const SYNC = KINDS.indexOf('dp_sync');

/** Columns from [stage, kind, start, end] rows, as the worker builds them. */
function columns(events) {
  const col = (k, Type) => Type.from(events.map((e) => e[k] ?? 0));
  return {
    length: events.length, stage: col(0, Int32Array), kind: col(1, Uint8Array), start: col(2, Float64Array),
    end: col(3, Float64Array), microBatch: new Int32Array(events.length), chunk: new Int32Array(events.length),
    replica: new Int32Array(events.length), group: new Int32Array(events.length), kinds: KINDS,
  };
}

test('a stage that waits for a slower one each round: its band is busy 3 s of 4, idle as the row says', () => {
  // Stage 0: F 0-1, B 1-3, waits, F 4-5, B 5-7, then its gradient sync 7-8; stage 1 never waits.
  const cols = columns([
    [0, F, 0, 1], [0, B, 1, 3], [0, F, 4, 5], [0, B, 5, 7], [0, SYNC, 7, 8],
    [1, F, 0, 2], [1, B, 2, 4], [1, F, 4, 6], [1, B, 6, 8],
  ]);
  const lay = aggregate(cols, layout(cols, { stages: 2 }, 8));
  const [slow, fast] = lay.rows;
  // The band runs from the first backward's start to the last forward's end: 1 s to 5 s.
  assert.deepEqual(slow.band, { start: 1, end: 5, count: 1, busy: 3 });
  assert.equal(slow.busy, 7);
  assert.equal(slow.idle, 1);
  // What is drawn outside the band (the first forward, the last backward, the sync) plus the
  // band's busy time is the row's busy time: the hatched rest is its idle time, 1 s of the band.
  const outside = [...slow.shown].reduce((s, i) => s + cols.end[i] - cols.start[i], 0);
  assert.equal(outside + slow.band.busy, slow.busy);
  assert.equal(slow.band.end - slow.band.start - slow.band.busy, slow.idle);
  assert.deepEqual(fast.band, { start: 2, end: 6, count: 1, busy: 4 });
  assert.equal(fast.idle, 0);
});

test('overlapping blocks count once, in the band as in the row', () => {
  // A gradient sync beside the second forward (overlap_grad_reduce): 3.5-4.5 inside F 3-5.
  const cols = columns([[0, F, 0, 1], [0, B, 1, 3], [0, F, 3, 5], [0, SYNC, 3.5, 4.5], [0, B, 5, 7]]);
  const [row] = aggregate(cols, layout(cols, { stages: 1 }, 7)).rows;
  assert.deepEqual(row.band, { start: 1, end: 5, count: 1, busy: 4 });
  assert.equal(row.busy, 7);
  assert.equal(row.idle, 0);
});

test('a row without both kinds keeps every block and no band', () => {
  const cols = columns([[0, F, 0, 1], [0, F, 1, 2]]);
  const [row] = aggregate(cols, layout(cols, { stages: 1 }, 2)).rows;
  assert.equal(row.band, null);
  assert.equal(row.shown.length, 2);
});
