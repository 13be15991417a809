#include "cli/pipeline.h"

#include <vector>

#include "util/stop.h"

namespace atlas2kudu {

void run_pipeline(Reader& reader, Compiler& compiler, PriorState& prior, WindowWriter& writer,
                  Progress* progress, const WindowApplied& on_applied) {
  const std::size_t window_events = compiler.options().window_events;
  std::vector<Event> window;
  window.reserve(std::min<std::size_t>(window_events, 1 << 16));
  writer.start(compiler.header(prior.describe()));
  bool more = true;
  while (more) {
    window.clear();
    while (window.size() < window_events) {
      window.emplace_back();
      if (!reader.next(window.back())) {
        window.pop_back();
        more = false;
        break;
      }
      if (progress) progress->tick(reader.stats().records, reader.stats().events);
      throw_if_stopped();  // nothing of this window has run yet
    }
    throw_if_stopped();
    if (window.empty()) break;
    NetWindow net = fold_window(compiler, prior, window);
    writer.write(net);
    if (on_applied) on_applied(net.info, reader);
  }
  writer.finish();
}

}  // namespace atlas2kudu
