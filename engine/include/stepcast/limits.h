// What one call of the engine may cost. Every entry point (estimate, search, resolve, a link, a
// batch line) reads untrusted input: a link or a page's form must not be able to crash the engine,
// hang it or exhaust its memory, natively or in WebAssembly. Past a budget the call returns an
// error (parse_error for text, budget_exceeded for work) naming the budget; it never runs on.
// docs/limits.md states these figures.
#pragma once

#include <cstddef>
#include <cstdint>

namespace stepcast {

// Lists: entries of cluster.groups and plan.replicas (plan.stages has pp entries, bounded below),
// and errors collected for one document (a document of a million unknown keys reports 64).
inline constexpr size_t kMaxGroups = 64;
inline constexpr size_t kMaxReplicaSets = 256;
inline constexpr size_t kMaxErrors = 64;

// The cluster: GPUs in all groups together (a plan's counts multiply to it: 2^22 keeps every
// product of them with a batch of 2^40 within 64 bits). The model: parameters (the census counts
// gradient buckets times micro-batches in 64 bits).
inline constexpr int64_t kMaxGpus = int64_t{1} << 22;
inline constexpr double kMaxParameters = 1e14;

// One estimate: stage evaluations (the cost of every pipeline stage of every replica set, plus the
// balancer's two probes per stage for "auto" layers and one per stage for "auto" micro-batches),
// the balancer's work for "auto" layers (model.layers x pipeline stages), and blocks of the
// schedule's lean simulation over all replica sets (past it the closed form of pipeline.h stands
// in for the simulation; a timeline's events are bounded by EstimateOptions::max_timeline_events).
// The estimate's cost does not otherwise grow with the global batch.
inline constexpr int64_t kMaxStageEvaluations = 4096;
inline constexpr int64_t kMaxBalanceWork = int64_t{1} << 24;
// The search for the time-balanced exact split of "auto" micro-batches (balance.cpp): amounts
// tried times replica sets over its bisection, and amounts held at once (12 bytes each); past
// either the best split found stands.
inline constexpr int64_t kMaxExactSplitWork = int64_t{1} << 24;
inline constexpr int64_t kMaxExactSplitAmounts = int64_t{1} << 20;
inline constexpr size_t kMaxSimulatedBlocks = 400000;

// A scaling sweep (scaling.h): variants of one scenario, each an estimate within the budgets
// above. The page's sweep takes 13 (eight node counts, five TP degrees); 64 leaves room for a
// finer list from the command line.
inline constexpr size_t kMaxScalingPoints = 64;

// A name for people (scenario.name, model.name): bytes of UTF-8. A share link percent-encodes a
// name (at most 3 characters a byte), so two names of 256 bytes take at most 1,536 of a link's
// 8,192 characters (share_link.h), and a message quoting one stays a line.
inline constexpr size_t kMaxNameBytes = 256;
// A name as a message or a warning quotes it (json.h: printable): control characters escaped, cut
// with "..." past this many bytes, so a message stays one short line whatever the document holds.
inline constexpr size_t kNameInMessageBytes = 80;

}  // namespace stepcast
