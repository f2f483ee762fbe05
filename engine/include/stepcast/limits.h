// What one call of the engine may cost. Every entry point (estimate, search, resolve, a link, a
// batch line) reads untrusted input: a link or a page's form must not be able to crash the engine,
// hang it or exhaust its memory, natively or in WebAssembly. Past a budget the call returns an
// error (parse_error for text, budget_exceeded for work) naming the budget; it never runs on.
// README.md ("Limits") states these figures.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "stepcast/catalog.h"
#include "stepcast/result.h"

namespace stepcast {

// Text: a scenario document (a file, a batch line, what the page sends) and how deeply its objects
// and arrays nest (a scenario needs 6 levels; nesting is what recursion in a JSON library follows).
inline constexpr size_t kMaxDocumentBytes = size_t{1} << 20;
inline constexpr int kMaxJsonDepth = 32;

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
// schedule's event simulation over all replica sets (past it the closed form of pipeline.h stands
// in for the simulation). The estimate's cost does not otherwise grow with the global batch.
inline constexpr int64_t kMaxStageEvaluations = 4096;
inline constexpr int64_t kMaxBalanceWork = int64_t{1} << 24;
// The search for the time-balanced exact split of "auto" micro-batches (balance.cpp): amounts
// tried times replica sets over its bisection, and amounts held at once (12 bytes each); past
// either the best split found stands.
inline constexpr int64_t kMaxExactSplitWork = int64_t{1} << 24;
inline constexpr int64_t kMaxExactSplitAmounts = int64_t{1} << 20;
inline constexpr size_t kMaxSimulatedBlocks = 400000;

// Reads JSON text the engine did not write: at most kMaxDocumentBytes, objects and arrays nested
// at most kMaxJsonDepth deep, strings of valid UTF-8 (nlohmann's lexer checks it). `what` names
// the text in the error ("the scenario"): "<what> is not valid JSON", or a parse_error naming the
// limit it passes. Never throws, whatever the text.
Result<Json> parse_json(std::string_view text, std::string_view what = "the scenario",
                        size_t max_bytes = kMaxDocumentBytes);

// Well-formed UTF-8: no overlong forms, surrogates or code points past U+10FFFF.
bool valid_utf8(std::string_view text);

// Untrusted text as a message echoes it: one line of valid UTF-8, whatever the bytes. Control
// characters (C0, DEL, C1, U+2028/2029) are written as JSON escapes ("\n", "\u001b"), bytes that
// are not UTF-8 as "\xff"; cut after about `max_bytes` bytes (a whole escape or character more at
// most) with "..." when longer.
std::string printable(std::string_view text, size_t max_bytes = 48);

}  // namespace stepcast
