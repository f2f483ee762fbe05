// The resolved scenario or every problem of it (`stepcast resolve`, the page's resolve()).
#include "fuzz_common.h"
#include "stepcast/resolve.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stepcast;
  const auto doc = parse_json(fuzz::text_of(data, size));
  if (!fuzz::checked(doc)) return 0;
  const Json resolved = resolve_json(*doc, builtin_catalog());
  if (resolved.contains("errors")) {
    const Json& errors = resolved["errors"];
    if (errors.empty() || errors.size() > kMaxErrors)
      fuzz::finding("error list of this size", std::to_string(errors.size()));
    for (const auto& e : errors)
      fuzz::check_error(Error{
          ErrorCode::parse_error, e["path"].get<std::string>(), e["message"].get<std::string>(),
          e.value("related", std::vector<std::string>{}), e.value("hint", std::string())});
  } else if (auto path = non_finite_path(resolved)) {
    fuzz::finding("resolved scenario not finite", *path);
  }
  (void)resolved.dump();
  return 0;
}
