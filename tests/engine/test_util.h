// Helpers shared by the engine tests: scenarios from JSON text against the built-in presets.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "stepcast/estimate.h"
#include "stepcast/report.h"

namespace stepcast::test {

inline const Catalog& catalog() { return builtin_catalog(); }

inline Scenario scenario(const std::string& json) {
  auto s = parse_scenario(json, catalog());
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message) << "\n" << json;
  return s.ok() ? s.value() : Scenario{};
}

// A scenario document: its plan, model and cluster (Llama 3 70B on 8 DGX H100 unless given), and
// `extra` top-level keys (", \"seq_len\": 4096").
inline std::string doc(const std::string& plan,
                       const std::string& model = R"("llama3-70b")",
                       const std::string& cluster = R"({"node": "dgx-h100", "nodes": 8})",
                       const std::string& extra = "") {
  return R"({"model": )" + model + R"(, "cluster": )" + cluster + R"(, "plan": )" + plan + extra +
         "}";
}

inline Error error_of(const std::string& json) {
  auto s = parse_scenario(json, catalog());
  EXPECT_FALSE(s.ok()) << "expected an error for " << json;
  return s.ok() ? Error{} : s.error();
}

// A Llama-2-7B-like model, the worked example of census_test.cpp.
inline ModelSpec llama2_7b_like() {
  ModelSpec m;
  m.name = "llama2-7b-like";
  m.layers = 32;
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 32;
  m.ffn_hidden = 11008;
  m.vocab = 32000;
  m.seq_len = 4096;
  m.ffn_type = FfnType::swiglu;
  m.position = Position::rope;
  m.tied_embeddings = false;
  m.norm = Norm::rmsnorm;
  m.bias = false;
  return m;
}

}  // namespace stepcast::test
