#pragma once

#include <string_view>

namespace atlas2kudu {

inline constexpr std::string_view kVersion = "0.1.0";

}  // namespace atlas2kudu
