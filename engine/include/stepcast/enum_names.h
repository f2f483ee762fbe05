// One table of names per enum: the parser, the JSON writer, the link codec and the documentation
// all read it, so an enum value and its spelling cannot drift apart. Each enum's header
// specialises EnumNames<E> right after the enum, listing the names in declaration order.
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string_view>

namespace stepcast {

template <class E>
struct EnumNames;  // static constexpr std::array<std::string_view, N> values;

template <class E>
constexpr std::span<const std::string_view> enum_names() {
  return EnumNames<E>::values;
}

template <class E>
constexpr std::string_view name_of(E value) {
  const auto i = static_cast<size_t>(value);
  return i < EnumNames<E>::values.size() ? EnumNames<E>::values[i] : std::string_view("?");
}

template <class E>
constexpr std::optional<E> enum_from(std::string_view name) {
  const auto& names = EnumNames<E>::values;
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<E>(i);
  return std::nullopt;
}

}  // namespace stepcast
