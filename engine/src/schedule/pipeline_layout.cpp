#include "stepcast/pipeline_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "stepcast/json.h"
#include "stepcast/rule_ids.h"

namespace stepcast {

bool accounting_divides(int64_t layers, int64_t counted, int pp, int vpp) {
  const int64_t chunks = int64_t{pp} * vpp, total = layers + counted;
  return total % chunks == 0 && total / chunks >= 1 + (chunks == 1 ? counted : 0);
}

std::optional<LayerSplit> accounted_split(int64_t layers, int pp, int vpp) {
  for (const int counted : {2, 1})
    if (accounting_divides(layers, counted, pp, vpp))
      return LayerSplit{.embedding_in_split = counted == 2, .loss_in_split = true};
  return std::nullopt;
}

std::optional<LayerSplit> uneven_split(int64_t layers, int pp, int vpp) {
  if (pp < 2 || layers % vpp != 0) return std::nullopt;  // every stage a multiple of vpp
  // Each other stage holds k layers (a multiple of vpp); the first and last share the rest. With
  // two stages there are no others: one candidate, k = 0.
  auto cost = [&](const LayerSplit& s) {  // the busiest stage, then its gap to the lightest
    const int64_t most = std::max({s.first_stage_layers, s.last_stage_layers,
                                   s.other_stage_layers});
    const int64_t least = std::min({s.first_stage_layers, s.last_stage_layers,
                                    pp > 2 ? s.other_stage_layers : s.first_stage_layers});
    return std::pair{most, most - least};
  };
  std::optional<LayerSplit> best;
  const int64_t step = pp > 2 ? vpp : layers + 1;
  for (int64_t k = pp > 2 ? vpp : 0; k <= layers; k += step) {
    const int64_t rest = layers - k * (pp - 2);
    if (rest < 2 * int64_t{vpp}) break;
    LayerSplit s;
    s.first_stage_layers = rest / vpp / 2 * vpp;
    s.last_stage_layers = rest - s.first_stage_layers;
    s.other_stage_layers = k;
    // Ends heavier than the stages between them are no split anyone wants: they carry the
    // embedding and the output layer besides (80 layers on 32 stages would be 10, 2·30, 10).
    if (pp > 2 && s.last_stage_layers > k) continue;
    if (!best || cost(s) < cost(*best)) best = s;
  }
  return best;
}

namespace {

constexpr size_t kMaxStages = 1 << 16;
constexpr int64_t kMaxLayers = 100000;
constexpr int64_t kMaxRepeat = 100000;
constexpr int kMaxDepth = 8;

// A recursive-descent reader over the text: a sequence of items, each a symbol, '|' or a
// parenthesised sequence, optionally followed by "*n". Expanding it yields the stage list.
class Reader {
 public:
  Reader(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  Result<std::vector<VirtualStage>> read() {
    stages_.assign(1, VirtualStage{});
    if (auto e = sequence(0)) return *e;
    if (pos_ != text_.size())
      return fail(fmt::format("unexpected '{}'", printable(text_.substr(pos_, 1))));
    return stages_;
  }

 private:
  // The text as given is untrusted (an imported argument, a link): escaped and cut.
  Error fail(const std::string& what) const {
    return Error{.code = ErrorCode::invalid_plan,
                 .path = path_,
                 .message = fmt::format("{}=\"{}\": {} at character {} (symbols E t m L, '|' "
                                        "between stages, \"x*n\" and \"(...)*n\" repeats)",
                                        path_, printable(text_, 60), what, pos_ + 1),
                 .rule = Rule::layout_syntax,
                 .values = {{"position", pos_ + 1}}};
  }

  // Reads items up to the end or a ')'; every item is applied to the stage list as it is read,
  // and a repeated item's text is replayed for its further copies.
  std::optional<Error> sequence(int depth) {
    while (pos_ < text_.size() && text_[pos_] != ')') {
      const size_t start = pos_;
      if (text_[pos_] == '(') {
        if (depth >= kMaxDepth) return fail("groups nested too deep");
        ++pos_;
        if (auto e = sequence(depth + 1)) return e;
        if (pos_ >= text_.size() || text_[pos_] != ')') return fail("missing ')'");
        ++pos_;
      } else if (auto e = symbol()) {
        return e;
      }
      const std::string_view item = text_.substr(start, pos_ - start);
      if (pos_ < text_.size() && text_[pos_] == '*') {
        ++pos_;
        const size_t digits = pos_;
        while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9' &&
               pos_ - digits < 7)
          ++pos_;
        if (pos_ == digits) return fail("'*' needs a count");
        int64_t times = 0;
        for (size_t i = digits; i < pos_; ++i) times = times * 10 + (text_[i] - '0');
        if (times < 1 || times > kMaxRepeat) return fail("repeat counts run from 1 to 100000");
        for (int64_t r = 1; r < times; ++r) {
          Reader again(item, path_);
          again.stages_ = std::move(stages_);
          again.total_ = total_;
          auto e = again.sequence(depth);
          stages_ = std::move(again.stages_);
          total_ = again.total_;
          if (e) return fail("the repeated group is not valid");
          if (stages_.size() > kMaxStages || total_ > 4 * kMaxLayers)
            return fail("the layout expands to too many stages or layers");
        }
      }
      if (stages_.size() > kMaxStages) return fail("the layout expands to too many stages");
    }
    return std::nullopt;
  }

  std::optional<Error> symbol() {
    VirtualStage& s = stages_.back();
    switch (text_[pos_]) {
      case 'E': s.embedding = true; break;
      case 't': ++s.layers, ++total_; break;
      case 'm': ++s.mtp, ++total_; break;
      case 'L': s.loss = true; break;
      case '|': stages_.push_back({}); break;
      case ' ': break;
      default: return fail(fmt::format("unknown symbol '{}'", printable(text_.substr(pos_, 1))));
    }
    if (total_ > 4 * kMaxLayers) return fail("the layout has too many layers");
    ++pos_;
    return std::nullopt;
  }

  std::string_view text_;
  const std::string& path_;
  size_t pos_ = 0;
  int64_t total_ = 0;
  std::vector<VirtualStage> stages_;
};

}  // namespace

Result<std::vector<VirtualStage>> parse_pipeline_layout(std::string_view text,
                                                        const std::string& path) {
  if (text.size() > 4096)
    return Error{.code = ErrorCode::out_of_range,
                 .path = path,
                 .message = path + " is longer than 4096 characters",
                 .rule = Rule::layout_syntax};
  return Reader(text, path).read();
}

}  // namespace stepcast
