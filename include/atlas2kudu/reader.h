// The reader: any real Atlas notification export in, a clean ordered stream of Events out.
// (Full contract: see the Reader class below; filled in by the reader implementation.)
#pragma once

#include <string>
#include <vector>

#include "atlas2kudu/event.h"

namespace atlas2kudu {

// Convenience for tests and tools: reads every record of `paths` in order (stdin for "-") and
// returns the events. Throws InputError (reader_error.h) on the first malformed record.
std::vector<Event> read_all_events(const std::vector<std::string>& paths);

}  // namespace atlas2kudu
