#include "cli/pipeline.h"

#include <vector>

#include "util/stop.h"

namespace atlas2kudu {

void run_pipeline(Reader& reader, Compiler& compiler, PriorState& prior, WindowWriter& writer,
                  Progress* progress, const WindowApplied& on_applied, PipelineStats* stats) {
  const std::size_t window_events = compiler.options().window_events;
  std::vector<Event> window;
  window.reserve(std::min<std::size_t>(window_events, 1 << 16));
  WindowCutter cut(compiler.options());
  writer.start(compiler.header(prior.describe()));
  bool more = true;
  while (more) {
    window.clear();
    cut.start();
    while (true) {
      window.emplace_back();
      if (!reader.next(window.back())) {
        window.pop_back();
        more = false;
        break;
      }
      if (progress) progress->tick(reader);
      throw_if_stopped();  // nothing of this window has run yet
      if (cut.add(window.back())) break;
    }
    throw_if_stopped();
    if (window.empty()) break;
    NetWindow net = fold_window(compiler, prior, window);
    // The events stay until the window is written: the rows view their text, and a row the
    // server refuses is traced back to the events that made it (net.events views them).
    writer.write(net);
    if (stats) {
      ++stats->windows;
      stats->closed_early = cut.closed_early();
    }
    if (on_applied) on_applied(net.info, reader);
  }
  writer.finish();
}

}  // namespace atlas2kudu
