// A Megatron-LM command line -> a scenario (import_megatron_args.h). The flags it reads, and
// how the plain ones are copied, are the flag table's (formats/megatron_flags.cpp); the flags
// with rules are read by hand below, each rule stated in its table row.
#include "stepcast/import_megatron_args.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "formats/megatron_flags.h"
#include "scenario/specs_json.h"
#include "stepcast/limits.h"

namespace stepcast {

namespace {

using detail::FlagForm;
using detail::MegatronFlag;
using detail::megatron_flag;

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// The flags read from the words, last one wins (as argparse does).
struct Flags {
  std::map<std::string, std::string, std::less<>> values;
  std::set<std::string, std::less<>> switches;
  std::vector<std::string> ignored;
  // The launcher's own options (torchrun --nnodes 4 --nproc-per-node 8).
  std::map<std::string, std::string, std::less<>> launcher;

  // (`name` is a row of the flag table: megatron_flag() stops the engine on a typo.)
  bool on(std::string_view name) const { return switches.count(megatron_flag(name).flag) > 0; }
  const std::string* value(std::string_view name) const {
    auto it = values.find(megatron_flag(name).flag);
    return it == values.end() ? nullptr : &it->second;
  }
};

Error flag_error(ErrorCode code, std::string_view flag, std::string message) {
  return Error{code, fmt::format("--{}", flag), std::move(message)};
}

// Reads `--name value`, `--name=value` and switches from words[first...].
Result<Flags> read_flags(const std::vector<std::string>& words, size_t first) {
  Flags f;
  for (size_t i = first; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (!starts_with(w, "--")) {
      f.ignored.push_back(w);  // a stray word (a positional argument Megatron does not take)
      continue;
    }
    std::string name = w.substr(2), value;
    bool has_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
      has_value = true;
    }
    // Megatron's argparse also accepts underscores in a few flags; the engine reads dashes.
    std::replace(name.begin(), name.end(), '_', '-');
    const bool next_is_value = i + 1 < words.size() && !starts_with(words[i + 1], "--");
    const MegatronFlag* known = detail::find_megatron_flag(name);
    if (known && !known->takes_value()) {
      if (has_value)
        return flag_error(ErrorCode::type_error, name,
                          fmt::format("--{} is a switch and takes no value (got {})", name,
                                      printable(value)));
      f.switches.insert(name);
    } else if (known) {
      if (!has_value) {
        if (!next_is_value)
          return flag_error(ErrorCode::missing_key, name, fmt::format("--{} needs a value", name));
        value = words[++i];
        while (known->many && i + 1 < words.size() && !starts_with(words[i + 1], "--"))
          value += " " + words[++i];
      }
      if (starts_with(value, "$"))
        return flag_error(ErrorCode::type_error, name,
                          fmt::format("--{} {}: a shell variable the importer cannot expand; "
                                      "write its value",
                                      name, printable(value)));
      f.values[name] = value;
    } else {
      // Not modelled: kept with its value (a word that is not a flag after it) for the list.
      std::string shown = "--" + name;
      if (has_value) shown += " " + value;
      else if (next_is_value) shown += " " + words[++i];
      f.ignored.push_back(shown);
    }
  }
  return f;
}

// A whole number of a flag, within [min, max].
class Reader {
 public:
  explicit Reader(const Flags& f) : f_(f) {}
  std::optional<int64_t> integer(std::string_view name, int64_t min = 1,
                                 int64_t max = int64_t{1} << 40) {
    const std::string* v = f_.value(name);
    if (!v) return std::nullopt;
    char* end = nullptr;
    const double x = std::strtod(v->c_str(), &end);
    if (v->empty() || *end != '\0' || !std::isfinite(x) || x != std::floor(x)) {
      fail(ErrorCode::type_error, name, fmt::format("--{} {} must be a whole number", name,
                                                    printable(*v)));
      return std::nullopt;
    }
    if (x < static_cast<double>(min) || x > static_cast<double>(max)) {
      fail(ErrorCode::out_of_range, name,
           fmt::format("--{} {} must be from {} to {}", name, printable(*v), min, max));
      return std::nullopt;
    }
    return static_cast<int64_t>(x);
  }
  // A number above 0, or 0 too where the key's range starts at it (--hidden-dropout 0).
  std::optional<double> number(std::string_view name, bool zero_allowed = false) {
    const std::string* v = f_.value(name);
    if (!v) return std::nullopt;
    char* end = nullptr;
    const double x = std::strtod(v->c_str(), &end);
    if (v->empty() || *end != '\0' || !std::isfinite(x) || !(x > 0 || (zero_allowed && x == 0))) {
      fail(ErrorCode::type_error, name,
           fmt::format("--{} {} must be a {} number", name, printable(*v),
                       zero_allowed ? "non-negative" : "positive"));
      return std::nullopt;
    }
    return x;
  }
  int64_t required(std::string_view name) {
    if (!f_.value(name) && !error_)
      error_ = flag_error(ErrorCode::missing_key, name, fmt::format("--{} is required", name));
    return integer(name).value_or(0);
  }
  // One of `choices`, or "" when absent.
  std::string choice(std::string_view name, std::initializer_list<std::string_view> choices) {
    return choice(name, std::span<const std::string_view>(choices.begin(), choices.size()));
  }
  std::string choice(std::string_view name, std::span<const std::string_view> choices) {
    const std::string* v = f_.value(name);
    if (!v) return "";
    if (std::find(choices.begin(), choices.end(), *v) == choices.end()) {
      std::string list;
      for (auto c : choices) list += fmt::format("{}{}", list.empty() ? "" : ", ", c);
      fail(ErrorCode::out_of_range, name,
           fmt::format("--{} {} must be one of {}", name, printable(*v), list));
      return "";
    }
    return *v;
  }
  void fail(ErrorCode code, std::string_view name, std::string message) {
    if (!error_) error_ = flag_error(code, name, std::move(message));
  }
  const std::optional<Error>& error() const { return error_; }

 private:
  const Flags& f_;
  std::optional<Error> error_;
};

// --moe-layer-freq: an integer, or a Python list expression as Megatron evaluates it: "[1,0,1]",
// "[0]*3+[1]*58", "([0]*1+[1]*26)". A list of k zeros then ones is `first_dense_layers` k; a list
// that is every f-th layer is `layer_freq` f; otherwise the 0/1 list.
std::optional<std::vector<int>> layer_freq_list(std::string text) {
  text.erase(std::remove(text.begin(), text.end(), ' '), text.end());
  if (text.size() >= 2 && text.front() == '(' && text.back() == ')')
    text = text.substr(1, text.size() - 2);
  std::vector<int> out;
  size_t pos = 0;
  while (pos < text.size()) {
    if (text[pos] != '[') return std::nullopt;
    const size_t close = text.find(']', pos);
    if (close == std::string::npos) return std::nullopt;
    std::vector<int> items;
    for (size_t i = pos + 1; i < close; ++i) {
      if (text[i] == ',') continue;
      if (text[i] != '0' && text[i] != '1') return std::nullopt;
      items.push_back(text[i] - '0');
    }
    pos = close + 1;
    int64_t repeat = 1;
    if (pos < text.size() && text[pos] == '*') {
      size_t end = pos + 1;
      while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
      if (end == pos + 1 || end - pos > 7) return std::nullopt;
      repeat = std::stoll(text.substr(pos + 1, end - pos - 1));
      pos = end;
    }
    if (static_cast<int64_t>(out.size()) + repeat * static_cast<int64_t>(items.size()) > 100000)
      return std::nullopt;
    for (int64_t r = 0; r < repeat; ++r) out.insert(out.end(), items.begin(), items.end());
    if (pos < text.size()) {
      if (text[pos] != '+') return std::nullopt;
      ++pos;
    }
  }
  if (out.empty()) return std::nullopt;
  return out;
}

void write_layer_freq(const std::vector<int>& list, Json& moe) {
  const size_t n = list.size();
  size_t first = 0;
  while (first < n && list[first] == 0) ++first;
  if (first < n && std::all_of(list.begin() + static_cast<long>(first), list.end(),
                               [](int b) { return b == 1; })) {
    if (first > 0) moe["first_dense_layers"] = first;
    return;
  }
  for (size_t f = 2; f <= n; ++f) {
    bool every = true;
    for (size_t i = 0; i < n && every; ++i) every = list[i] == (i % f == 0 ? 1 : 0);
    if (every) {
      moe["layer_freq"] = f;
      return;
    }
  }
  moe["layer_freq"] = list;
}

// The place of a schema path ("model.moe.top_k") in a document, made where it is not there yet.
Json& slot_at(Json& document, std::string_view path) {
  Json* at = &document;
  while (true) {
    const size_t dot = path.find('.');
    at = &(*at)[std::string(path.substr(0, dot))];
    if (dot == std::string_view::npos) return *at;
    path.remove_prefix(dot + 1);
  }
}

// A plain flag into the document as its row says: a switch's true or false (or its `is` text
// where it is given), or the flag's value, Megatron's default where it is absent.
void copy(const MegatronFlag& row, const Flags& f, Reader& r, Json& document) {
  if (row.form != FlagForm::value) {
    const bool on = f.on(row.flag);
    if (row.is.empty()) slot_at(document, row.key) = row.form == FlagForm::on ? on : !on;
    else if (on) slot_at(document, row.key) = row.is;
    return;
  }
  const KeyInfo& key = detail::key_of(row);
  const DefaultValue& absent = row.absent;
  Json value;  // null while the flag is absent
  if (key.type == ValueType::number) {
    if (auto v = r.number(row.flag, key.min == 0 && !key.min_exclusive)) value = *v;
  } else if (key.type == ValueType::text) {
    if (const std::string* v = f.value(row.flag)) value = *v;
  } else if (key.type == ValueType::choice) {
    if (std::string v = r.choice(row.flag, key.choices); !v.empty()) value = std::move(v);
  } else if (absent.kind == DefaultValue::Kind::required) {
    value = r.required(row.flag);
  } else if (auto v = r.integer(row.flag)) {
    value = *v;
  }
  if (value.is_null()) {
    if (absent.kind == DefaultValue::Kind::number) value = static_cast<int64_t>(absent.number);
    else if (absent.kind == DefaultValue::Kind::text) value = std::string(absent.text);
    else return;
  }
  slot_at(document, row.key) = std::move(value);
}

}  // namespace

Result<std::vector<std::string>> split_command_line(std::string_view text) {
  if (text.size() > kMaxDocumentBytes)
    return Error{ErrorCode::parse_error, "",
                 fmt::format("the command line is over {} bytes", kMaxDocumentBytes)};
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      if (text[i + 1] == '\n') {  // continuation
        ++i;
        continue;
      }
      if (text[i + 1] == '\r' && i + 2 < text.size() && text[i + 2] == '\n') {
        i += 2;
        continue;
      }
      word += text[++i];
      in_word = true;
    } else if (c == '\'' || c == '"') {
      const size_t close = text.find(c, i + 1);
      if (close == std::string_view::npos)
        return Error{ErrorCode::parse_error, "",
                     fmt::format("the command line has an unclosed {} quote", c)};
      word += text.substr(i + 1, close - i - 1);
      in_word = true;
      i = close;
    } else if (c == '#' && !in_word) {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

Result<MegatronImport> scenario_from_megatron_args(std::string_view command_line,
                                                   const Catalog& catalog,
                                                   const MegatronImportOptions& options) {
  const NodePreset* node = catalog.find_node(options.node);
  if (!node)
    return Error{ErrorCode::unknown_preset, "node",
                 fmt::format("node {} is not a node preset", printable(options.node))};
  auto split = split_command_line(command_line);
  if (!split) return split.error();
  const std::vector<std::string>& words = *split;

  // The launcher: VAR=value assignments, then torchrun (or python -m torch.distributed.run) and
  // its options up to the script.
  size_t script = words.size();
  for (size_t i = 0; i < words.size(); ++i)
    if (words[i].size() > 3 && words[i].ends_with(".py")) {
      script = i;
      break;
    }
  const size_t first_arg = script == words.size() ? 0 : script + 1;
  Flags launcher_flags;
  if (script < words.size()) {
    for (size_t i = 0; i < script; ++i) {
      const std::string& w = words[i];
      if (!starts_with(w, "--")) continue;
      std::string name = w.substr(2), value;
      if (auto eq = name.find('='); eq != std::string::npos) {
        value = name.substr(eq + 1);
        name.resize(eq);
      } else if (i + 1 < script && !starts_with(words[i + 1], "--")) {
        value = words[++i];
      }
      std::replace(name.begin(), name.end(), '_', '-');
      launcher_flags.launcher[name] = value;
    }
  }
  auto read = read_flags(words, first_arg);
  if (!read) return read.error();
  Flags f = std::move(read).value();
  // Words before the flags (other than the launcher's) are not Megatron arguments either.
  if (script == words.size()) {
    std::erase_if(f.ignored, [](const std::string& w) { return w.find('=') != std::string::npos &&
                                                               !starts_with(w, "--"); });
  }
  Reader r(f);
  MegatronImport out;
  Json doc = {{"model", {{"name", "imported Megatron-LM model"}}},
              {"plan", {{"framework", "megatron-core"}}}};
  Json& m = doc["model"];
  Json& p = doc["plan"];
  // The launcher's environment: PyTorch's allocator with expandable segments
  // (PYTORCH_CUDA_ALLOC_CONF, or PYTORCH_ALLOC_CONF as torchtitan's run_train.sh names it).
  for (size_t i = 0; i < (script < words.size() ? script : words.size()); ++i) {
    const std::string& w = words[i];
    if ((starts_with(w, "PYTORCH_CUDA_ALLOC_CONF=") || starts_with(w, "PYTORCH_ALLOC_CONF=")) &&
        w.find("expandable_segments:True") != std::string::npos)
      p["expandable_segments"] = true;
  }
  // The model's parts the command line has: multi-latent attention, experts.
  if (f.on("multi-latent-attention")) m["attention"] = Json::object();
  if (f.value("num-experts")) m["moe"] = Json::object();

  // The plain flags of the model or the plan, copied as their rows say (what a flag's absence
  // means to Megatron-LM); the flags with rules follow each by hand, as their rows state.
  auto copy_plain = [&](std::string_view object) {
    for (const MegatronFlag& row : detail::megatron_flags())
      if (!row.by_hand() && row.key.starts_with(object) && detail::applies(doc, row.key))
        copy(row, f, r, doc);
  };

  // The model.
  copy_plain("model.");
  const int64_t layers = m["layers"].get<int64_t>();
  const int64_t hidden = m["hidden"].get<int64_t>();
  const int64_t heads = m["heads"].get<int64_t>();
  const bool gqa = f.on("group-query-attention");
  m["kv_heads"] = gqa ? r.required("num-query-groups") : heads;
  const bool swiglu = f.on("swiglu");
  m["ffn_type"] = swiglu ? "swiglu" : f.on("squared-relu") ? "squared_relu" : "gelu";
  // Megatron's default widths: 4h, or 2/3 of it rounded down to a multiple of 64 for SwiGLU.
  const int64_t default_ffn = swiglu ? (4 * hidden * 2 / 3) / 64 * 64 : 4 * hidden;
  m["ffn_hidden"] = r.integer("ffn-hidden-size").value_or(default_ffn);
  // The engine pads the vocabulary itself (to 128·tp, as Megatron does by default): it reads
  // --vocab-size, or the padded size when only that is given.
  const auto padded = r.integer("padded-vocab-size");
  if (!f.value("vocab-size") && !padded && !r.error())
    r.fail(ErrorCode::missing_key, "vocab-size",
           "--vocab-size (or --padded-vocab-size) is required (the importer does not read "
           "tokenizer files)");
  if (const auto vocab = r.integer("vocab-size")) {
    m["vocab"] = *vocab;
    if (padded)
      out.notes.push_back(fmt::format("--padded-vocab-size {}: not used; the engine pads "
                                      "--vocab-size {} to a multiple of 128·tp itself",
                                      *padded, *vocab));
  } else {
    m["vocab"] = padded.value_or(0);
    if (padded)
      out.notes.push_back(fmt::format("--padded-vocab-size {} taken as the vocabulary (padded "
                                      "again to a multiple of 128·tp where it is not one)",
                                      *padded));
  }
  const std::string pos = r.choice("position-embedding-type",
                                   {"learned_absolute", "rope", "mrope", "yarn", "none"});
  m["position"] = pos == "learned_absolute" || (pos.empty() && !f.on("use-rotary-position-embeddings"))
                      ? "learned"
                      : "rope";
  if (pos == "none") out.notes.push_back("--position-embedding-type none: modelled as rope (no "
                                         "position parameters either way)");
  const std::string norm = r.choice("normalization", {"LayerNorm", "RMSNorm"});
  m["norm"] = norm == "RMSNorm" ? "rmsnorm" : "layernorm";
  if (auto kv = r.integer("kv-channels"); kv && *kv * heads != hidden) m["head_dim"] = *kv;
  if (m.contains("attention")) m["kv_heads"] = heads;  // MLA: one latent for every head
  if (m.contains("moe")) {
    Json& moe = m["moe"];
    moe["ffn_hidden"] = r.integer("moe-ffn-hidden-size").value_or(m["ffn_hidden"].get<int64_t>());
    if (auto shared = r.integer("moe-shared-expert-intermediate-size")) {
      // Megatron gives the shared experts' total width; the engine counts one expert that wide.
      moe["shared_experts"] = 1;
      moe["shared_ffn_hidden"] = *shared;
    }
    if (const std::string* freq = f.value("moe-layer-freq")) {
      char* end = nullptr;
      const long every = std::strtol(freq->c_str(), &end, 10);
      if (!freq->empty() && *end == '\0') {
        if (every < 1 || every > 100000)
          r.fail(ErrorCode::out_of_range, "moe-layer-freq",
                 fmt::format("--moe-layer-freq {} must be from 1 to 100000", printable(*freq)));
        else if (every > 1)
          moe["layer_freq"] = every;
      } else if (auto list = layer_freq_list(*freq)) {
        if (static_cast<int64_t>(list->size()) != layers)
          r.fail(ErrorCode::out_of_range, "moe-layer-freq",
                 fmt::format("--moe-layer-freq lists {} layers but --num-layers is {}",
                             list->size(), layers));
        else
          write_layer_freq(*list, moe);
      } else {
        r.fail(ErrorCode::type_error, "moe-layer-freq",
               fmt::format("--moe-layer-freq {} must be an integer or a list such as "
                           "\"[0]*3+[1]*58\"",
                           printable(*freq)));
      }
    }
  }
  if (auto mtp = r.integer("mtp-num-layers", 0, 64); mtp && *mtp > 0) m["mtp_layers"] = *mtp;

  // The plan.
  copy_plain("plan.");
  const int64_t pp = p["pp"].get<int64_t>();
  if (auto per_stage = r.integer("num-layers-per-virtual-pipeline-stage")) {
    // (Divided in turn, not multiplied: each count may be as large as 2^40.)
    if (layers % pp != 0 || (layers / pp) % *per_stage != 0)
      r.fail(ErrorCode::out_of_range, "num-layers-per-virtual-pipeline-stage",
             fmt::format("--num-layers-per-virtual-pipeline-stage {} times "
                         "--pipeline-model-parallel-size {} must divide --num-layers {}",
                         *per_stage, pp, layers));
    else if (layers / pp / *per_stage > 1)
      p["vpp"] = layers / pp / *per_stage;
  }
  // --virtual-pipeline-model-parallel-size: the name NeMo and older launch scripts use.
  for (const char* flag : {"num-virtual-stages-per-pipeline-rank",
                           "virtual-pipeline-model-parallel-size"})
    if (auto vpp = r.integer(flag); vpp && *vpp > 1) p["vpp"] = *vpp;
  if (m.contains("moe"))
    p["etp"] = r.integer("expert-tensor-parallel-size").value_or(p["tp"].get<int64_t>());
  const std::string granularity = r.choice("recompute-granularity", {"full", "selective"});
  p["recompute"] = granularity.empty() ? "none" : granularity;
  const std::string method = r.choice("recompute-method", {"uniform", "block"});
  if (granularity == "full") {
    p["recompute_method"] = method.empty() ? "uniform" : method;
    p["recompute_num_layers"] = r.integer("recompute-num-layers").value_or(1);
  }
  if (const std::string* modules = f.value("recompute-modules");
      modules && granularity == "selective")
    p["recompute_modules"] = *modules;
  if (const std::string* modules = f.value("offload-modules");
      modules && f.on("fine-grained-activation-offloading"))
    p["offload_modules"] = *modules;
  // The optimizer's share on the CPU and the copies' overlap count only with the switch.
  if (f.on("optimizer-cpu-offload")) {
    if (auto fraction = r.number("optimizer-offload-fraction", true))
      p["optimizer_offload_fraction"] = *fraction;
    p["overlap_cpu_optimizer_d2h_h2d"] = f.on("overlap-cpu-optimizer-d2h-h2d");
  }
  const std::string fp8 = r.choice("fp8-format", {"e4m3", "hybrid"});
  const std::string recipe = r.choice("fp8-recipe", {"tensorwise", "delayed", "mxfp8", "blockwise", "custom"});
  const std::string fp4 = r.choice("fp4-format", {"e2m1"});
  p["precision"] = !fp4.empty()                       ? "nvfp4"
                   : !fp8.empty() && recipe == "mxfp8" ? "mxfp8"
                   : !fp8.empty()                      ? "fp8"
                   : f.on("bf16")                      ? "bf16"
                   : f.on("fp16")                      ? "fp16"
                                                       : "fp32";
  if (!fp8.empty() && (recipe == "blockwise" || recipe == "custom"))
    out.notes.push_back(fmt::format("--fp8-recipe {}: modelled as per-tensor fp8", recipe));
  // Adam's moments: two 16-bit ones (bf16, or fp16: the same bytes) with the precision-aware
  // optimizer, which Megatron needs for them; fp8 moments are counted as 16-bit, one 16-bit
  // moment beside an fp32 one as fp32 moments.
  const std::string avg = r.choice("exp-avg-dtype", {"fp32", "fp16", "bf16", "fp8"});
  const std::string avg_sq = r.choice("exp-avg-sq-dtype", {"fp32", "fp16", "bf16", "fp8"});
  auto narrow = [](const std::string& dtype) { return !dtype.empty() && dtype != "fp32"; };
  const bool aware = f.on("use-precision-aware-optimizer");
  // Under --optimizer-cpu-offload the hybrid device optimizer builds its Adams without the
  // moments' dtypes (megatron/core/optimizer/__init__.py at NVIDIA/Megatron-LM d98e8a64): fp32.
  const bool hybrid = f.on("optimizer-cpu-offload");
  p["bf16_moments"] = aware && !hybrid && narrow(avg) && narrow(avg_sq);
  if (hybrid && aware && (narrow(avg) || narrow(avg_sq)))
    out.notes.push_back("--exp-avg-dtype / --exp-avg-sq-dtype with --optimizer-cpu-offload: the "
                        "hybrid device optimizer keeps fp32 moments");
  if (!aware && (narrow(avg) || narrow(avg_sq)))
    out.notes.push_back("--exp-avg-dtype / --exp-avg-sq-dtype without "
                        "--use-precision-aware-optimizer: Megatron keeps fp32 moments");
  else if (aware && narrow(avg) != narrow(avg_sq))
    out.notes.push_back(fmt::format("--exp-avg-dtype {} with --exp-avg-sq-dtype {}: modelled as "
                                    "fp32 moments",
                                    avg.empty() ? "fp32" : avg, avg_sq.empty() ? "fp32" : avg_sq));
  else if (aware && (avg == "fp8" || avg_sq == "fp8"))
    out.notes.push_back("fp8 Adam moments: modelled as 16-bit (bf16) moments");
  const std::string backend =
      r.choice("attention-backend", {"flash", "fused", "unfused", "local", "auto"});
  p["flash_attention"] = backend != "unfused" && backend != "local";
  const std::string graphs =
      r.choice("cuda-graph-impl", {"none", "local", "transformer_engine", "full_iteration"});
  p["cuda_graphs"] = !graphs.empty() && graphs != "none";
  // Megatron-Core's TransformerConfig: the fusion off by default, its kernel `native` unless
  // said (model_parallel_config.py at NVIDIA/Megatron-LM d98e8a64).
  const std::string ce = r.choice("cross-entropy-fusion-impl", {"native", "te"});
  p["cross_entropy_fusion"] =
      !f.on("cross-entropy-loss-fusion") ? "none" : ce.empty() ? "native" : ce;
  if (r.error()) return *r.error();
  // The model's own rules (query groups divide the heads, top-k <= experts, sizes in range).
  if (auto checked = detail::model_from_json(m, "model", false); !checked) return checked.error();

  out.scenario = std::move(doc);

  // The cluster, when torchrun says how many nodes and GPUs.
  const auto& l = launcher_flags.launcher;
  auto nnodes = l.find("nnodes");
  auto nproc = l.find("nproc-per-node");
  if (nnodes != l.end() && nproc != l.end()) {
    char *e1 = nullptr, *e2 = nullptr;
    const long nodes = std::strtol(nnodes->second.c_str(), &e1, 10);
    const long gpus = std::strtol(nproc->second.c_str(), &e2, 10);
    if (nnodes->second.empty() || *e1 != '\0' || nodes < 1 || nodes > kMaxGpus)
      return Error{ErrorCode::type_error, "--nnodes",
                   fmt::format("torchrun --nnodes {} must be a whole number of nodes (a range "
                               "such as 1:4 is not read)",
                               printable(nnodes->second))};
    if (nproc->second.empty() || *e2 != '\0' || gpus < 1 || gpus > 4096)
      return Error{ErrorCode::type_error, "--nproc-per-node",
                   fmt::format("torchrun --nproc-per-node {} must be a whole number of GPUs",
                               printable(nproc->second))};
    if (gpus == node->gpus_per_node) {
      out.scenario["cluster"] = {{"node", node->id}, {"nodes", nodes}};
    } else {
      out.scenario["cluster"] = {{"gpu", node->gpu}, {"gpus_per_node", gpus}, {"nodes", nodes},
                                 {"intra_node_link", node->intra_node_link},
                                 {"inter_node_link", node->inter_node_link}};
    }
    out.notes.push_back(fmt::format("cluster: {} nodes of {} GPUs from torchrun; the hardware is "
                                    "the {} node preset's (--node chooses another)",
                                    nodes, gpus, node->id));
  } else {
    out.notes.push_back("cluster: the arguments do not say the hardware; add \"cluster\" (e.g. "
                        "{\"node\": \"dgx-h100\", \"nodes\": 4}) before estimating");
  }
  out.ignored = std::move(f.ignored);
  return out;
}

Json to_json(const MegatronImport& imported) {
  return Json{{"scenario", imported.scenario},
              {"ignored", imported.ignored},
              {"notes", imported.notes}};
}

}  // namespace stepcast
