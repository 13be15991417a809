#include "util/diagnostic.h"

namespace atlas2kudu {

void write_diagnostic(std::FILE* out, std::string_view text) noexcept {
  if (out == nullptr) return;
  if (std::fwrite(text.data(), 1, text.size(), out) != text.size() || std::fflush(out) != 0) {
    std::clearerr(out);
  }
}

}  // namespace atlas2kudu
