// Byte sources: where the reader's bytes come from. Files and stdin that start with the gzip magic
// bytes are inflated (any number of concatenated members), anything else passes through, so
// `*.gz` exports, gzip piped into stdin and plain text all read the same way. A gzip input that
// ends inside a member, is corrupt, or has anything but another member after a member is an error
// (SourceError), never a silently shorter input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "atlas2kudu/error.h"

namespace atlas2kudu {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to `size` bytes into `out`; returns 0 only at end of input. Throws SourceError.
  virtual std::size_t read(char* out, std::size_t size) = 0;
  // Bytes of the input as stored (still compressed, for gzip) used so far: with the file's size,
  // how far through it the reader is.
  virtual std::uint64_t consumed() const = 0;
  // Whether read() hands out other bytes than those stored (a gzip input, inflated): the offsets
  // of what was read are then no position in the stored input.
  virtual bool inflates() const = 0;
  // The name used in messages: the path as given, or "-" for stdin.
  virtual const std::string& name() const = 0;
  // What recognises this input on a later run (checkpoint.h): a hash of its first 64 KiB for
  // files, empty for stdin (which cannot be recognised).
  virtual std::string identity() const = 0;
  // The same input opened again, to be read from its start (the Reader does when the records a
  // checkpoint says were applied turn out to be others); nullptr when it cannot be: standard
  // input and pipes, which have no identity either.
  virtual std::unique_ptr<ByteSource> reopen() const { return nullptr; }
};

// An input that cannot be opened or read (missing file, corrupt, truncated or appended-to gzip
// stream, I/O error).
class SourceError : public Error {
 public:
  SourceError(bool cannot_open, const std::string& what)
      : Error(cannot_open ? ErrorCategory::kNoInput : ErrorCategory::kIo, what) {}
};

// Opens `path` ("-" = stdin). Throws SourceError(cannot_open=true) if it cannot be opened.
std::unique_ptr<ByteSource> open_byte_source(const std::string& path);

// Whether `path` names a regular file, which a later run can recognise and read again as it was
// (its source has an identity): not standard input ("-"), a pipe, a device, or a path that does
// not resolve.
bool names_a_regular_file(const std::string& path);

// An in-memory source for tests; hands out at most `max_read` bytes per read() to exercise
// records that straddle buffer refills.
std::unique_ptr<ByteSource> memory_byte_source(std::string name, std::string data,
                                               std::size_t max_read = static_cast<std::size_t>(-1));

}  // namespace atlas2kudu
