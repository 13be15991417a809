// InputError: one malformed record, thrown by the decoding layers and caught by the reader, which
// turns it into a rejection (reader.h) reported as `SOURCE:LINE:OFFSET: reason`.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "atlas2kudu/reader.h"

namespace atlas2kudu {

// Thrown by the decoding layers for one bad record; the reader catches it, attaches the record,
// and hands it to the reject policy. Message text is the reason only; position is separate.
class InputError : public std::runtime_error {
 public:
  InputError(RejectCode code, const std::string& reason)
      : std::runtime_error(reason), code_(code) {}
  RejectCode code() const { return code_; }

 private:
  RejectCode code_;
};

}  // namespace atlas2kudu
