// hs2-http's wait on a 502, 503 or 504 reply before it sends the request again, told as the wait
// starts: a load balancer draining impalad can hold a run for minutes, and a log that shows
// nothing then reads as a hung job. Told from the thread whose request waits.
//
//   HttpWait{503, "impalad.example.com:28000", 2, 4, 3, true}.text()
//     == "HTTP 503 from impalad.example.com:28000: try 2 of 4 in 3 s (Retry-After)"
#pragma once

#include <fmt/format.h>

#include <functional>
#include <string>

namespace atlas2kudu {

struct HttpWait {
  int status = 0;  // 502, 503 or 504
  std::string endpoint;
  int next_try = 0;          // the try after the wait: 2 to max_tries
  int max_tries = 0;         // --connect_max_tries
  long wait_seconds = 0;     // 0: at once
  bool retry_after = false;  // the server's Retry-After (at most 60 s), not our own back-off

  std::string text() const {
    return fmt::format("HTTP {} from {}: try {} of {} {}{}", status, endpoint, next_try, max_tries,
                       wait_seconds > 0 ? fmt::format("in {} s", wait_seconds) : "at once",
                       retry_after ? " (Retry-After)" : "");
  }
};
using HttpWaitNotice = std::function<void(const HttpWait&)>;

}  // namespace atlas2kudu
