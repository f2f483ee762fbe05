// Issue 38 §2: every scenario the reader accepts travels in a link. Each base of the invariant
// suite's generator (generator.h: presets and custom shapes, dense and MoE, groups, stages and
// replicas, every framework profile), with the page's tokens and price drawn over their whole
// range, is written as a link: one line of printable ASCII within the reader's 8,192 characters
// that reads back to the same estimate and the same page settings.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "generator.h"
#include "stepcast/report.h"
#include "stepcast/share_link.h"

namespace stepcast::invariants {
namespace {

// As many bases as the physical invariants (3,000 in about a second); more with the flag of
// tests/fuzz/README.md.
constexpr size_t kDefaultBases = 3000;

TEST(LinkRoundTrip, EveryAcceptedScenarioWritesALinkThatReadsBack) {
  const std::vector<Base> bases = draw_bases(first_seed(), bases_wanted(kDefaultBases));
  ASSERT_GE(bases.size(), kDefaultBases / 2);
  size_t failures = 0;
  for (const Base& base : bases) {
    std::mt19937_64 rng(base.seed);
    // Tokens 1 to 10^21 and a price 10^-3 to 10^6 USD, log-uniform: the writer's whole range,
    // exponents and fractions included.
    std::uniform_real_distribution<double> tokens_exp(0, 21), price_exp(-3, 6);
    const Json page = {{"tokens", std::min(1e21, std::round(std::pow(10.0, tokens_exp(rng))))},
                       {"price_per_gpu_hour", std::pow(10.0, price_exp(rng))}};
    const std::string where = fmt::format("seed {}: {}", base.seed, base.document.dump());
    auto link = scenario_to_link({base.document, page}, "https://example.org/stepcast/");
    if (!link.ok()) {
      ADD_FAILURE() << where << "\n  not written: " << link.error().message;
      if (++failures > 5) return;
      continue;
    }
    EXPECT_LE(link->size(), kMaxLinkLength) << where;
    for (const char c : *link)
      ASSERT_TRUE(c > 0x20 && c < 0x7F) << where << "\n  " << *link;
    auto back = scenario_from_link(*link);
    if (!back.ok()) {
      ADD_FAILURE() << where << "\n  " << *link << "\n  not read: " << back.error().message;
      if (++failures > 5) return;
      continue;
    }
    EXPECT_EQ(back->page, page) << where << "\n  " << *link;
    auto scenario = parse_scenario(back->scenario.dump(), builtin_catalog());
    ASSERT_TRUE(scenario.ok()) << where << "\n  " << *link << "\n  " << scenario.error().message;
    EXPECT_EQ(to_json(scenario->plan), to_json(base.scenario.plan)) << where << "\n  " << *link;
    const Report a = estimate(base.scenario), b = estimate(*scenario);
    EXPECT_EQ(a.iteration_time_s, b.iteration_time_s) << where << "\n  " << *link;
    EXPECT_EQ(a.parameters, b.parameters) << where << "\n  " << *link;
    EXPECT_EQ(a.fits, b.fits) << where << "\n  " << *link;
    EXPECT_EQ(a.warnings, b.warnings) << where << "\n  " << *link;
  }
}

}  // namespace
}  // namespace stepcast::invariants
