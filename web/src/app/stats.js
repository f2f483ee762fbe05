// For people and tests: window.__stepcast, what the page is doing. `state` is 'loading', 'ok',
// 'oom' or 'error' (the status line's); `latest` is the scenario the form shows (compact JSON,
// null while a field is not a number), `rendered` the one whose estimate (or error) is on screen
// in every card, `headline` the one whose headline numbers are (the Estimate card, drawn first),
// `resolved` the engine's resolve() of it (null while the engine refuses it). `link` is the
// engine's link of the scenario the form shows (with tokens and price), `linked` the scenario text
// it is for, `address` the link with the pinned plans (cards/compare.js); `opened` says how the last address was opened ('default', 'link' or what was wrong with
// it), `opens` counts the addresses opened (the first, then each pasted one). `updates` counts the
// estimates rendered; the last*Ms say where the last one's time went; `search`, `traffic` and
// `scaling` are those cards'; `engine` the workers' (`restarts`: ended after a call ran too long;
// `received`: the last report, engine/bridge.js).
import { searchStats } from '../cards/search.js';
import { stats as engineStats } from '../engine/bridge.js';

export const stats = { updates: 0, lastUpdateMs: NaN, lastEngineMs: NaN, state: 'loading', latest: undefined, rendered: undefined,
  resolved: null, link: undefined, linked: undefined, opened: undefined, opens: 0, search: searchStats, engine: engineStats };
window.__stepcast = stats;
