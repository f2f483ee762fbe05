// Share a scenario as a URL. The fragment carries the scenario as short, readable key=value
// pairs with defaults left out, plus a format version, so that links made today open the same
// plan after the schema grows:
//
//   http://localhost:8080/#v=3&model=llama3-70b&node=dgx-h100&nodes=8&tp=8&pp=4&dp=2&gbs=512
//       &rc=selective&seq=4096&end
//
// The page and the CLI share this codec (the page through WebAssembly). A link is untrusted
// input: decoding only builds JSON data, checks sizes, and reports malformed parts as errors.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "stepcast/json.h"
#include "stepcast/result.h"

namespace stepcast {

// Format 3 (issue 37): format 2 with an end marker, `&end`, as its last part. A link cut when it
// was copied (a chat that wraps it, a mail client that stops at a width) loses the marker and is
// refused as incomplete (Rule::link_incomplete) instead of opening with its tail's keys at their
// defaults. The marker, not a checksum, so that a link stays one people can edit by hand.
// Format 2 (framework profiles): a plan flag left out is the framework profile's; it has no end
// marker and still reads. Formats 0 and 1 were written when a left-out flag meant one fixed
// default; they open with those defaults filled in, so an old link estimates what it estimated
// when it was made.
inline constexpr int kLinkFormatVersion = 3;
inline constexpr std::string_view kLinkEndMarker = "end";
inline constexpr size_t kMaxLinkLength = 8192;

// What a link holds: the scenario document and the page's own settings (tokens to train, price
// per GPU-hour), which are not scenario keys.
struct LinkDocument {
  Json scenario;
  Json page = Json::object();  // {"tokens": number, "price_per_gpu_hour": number}
};

// Encodes a scenario document (as written by a user, not resolved) into `base` + "#" + fragment.
// Fails on scenario keys the link format cannot carry. A custom model travels whole (its shape:
// dimensions, MoE, MLA, window), less its text for people (link_leaves_out).
Result<std::string> scenario_to_link(const LinkDocument& doc, std::string_view base);

// What scenario_to_link leaves out of a document: a custom model's `source` and `notes` (text
// for people that no estimate reads, often longer than a link should be: an imported config's
// architecture and caveats). Their paths ("model.source"), for the CLI and the page to say so
// beside the link.
std::vector<std::string> link_leaves_out(const Json& scenario);

// Decodes a full URL or just its fragment. Accepts format 3 (refused as incomplete without its end
// marker), 2, 1 and the legacy format 0 (the scenario JSON itself, percent-encoded after '#'). The
// result still has to pass parse_scenario.
Result<LinkDocument> scenario_from_link(std::string_view url);

}  // namespace stepcast
