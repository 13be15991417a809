// Inflating gzip (or zlib) data held in memory, with a hard bound on the output.
//
// Atlas compresses large notifications with GZIP before Base64-encoding them into the envelope.
// A few kilobytes of such a message can inflate to gigabytes (a decompression bomb), so the caller
// gives the most bytes it is prepared to hold, and the output buffer never grows past one byte
// more than that: the extra byte is how an over-long stream is told apart from one that ends
// exactly at the limit.
//
//   std::string out;
//   gunzip(compressed, 1 << 20, out);   // out holds the text; throws DecodeError otherwise
//
// Concatenated gzip members (what `cat a.gz b.gz` produces) inflate to one continuous text.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "util/decode_error.h"

namespace atlas2kudu {

// Replaces the content of `out` with the inflated `data`. `out`'s capacity is reused, and any
// growth allocates exactly the size needed (never the doubling std::string may do), so `out`
// never holds more than max(its capacity on entry, max_bytes + 1) bytes of storage.
//
// Throws DecodeError:
//   kMalformed  "corrupt or truncated gzip data (<zlib's reason>)", or "cannot initialise gzip
//               decoder";
//   kTooLarge   "decompresses to more than <max_bytes> bytes".
// Either way `out` then holds what was inflated before the failure: for kTooLarge, exactly the
// first max_bytes + 1 bytes.
void gunzip(std::string_view data, std::size_t max_bytes, std::string& out);

}  // namespace atlas2kudu
