// "did you mean" for mistyped option names, subcommands and config keys.
//
//   closest_match("--max-reject", {"--max-rejects", "--reject-file"})  -> "--max-rejects"
//   closest_match("--frobnicate", {"--max-rejects"})                  -> nullopt
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace atlas2kudu {

// The candidate nearest to `word` by edit distance (insert, delete, replace, swap of neighbours),
// when it is close enough to be a typo: at most 1 edit for words of up to 4 characters, 2 up to
// 8, else 3. Ties go to the first candidate.
std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates);

}  // namespace atlas2kudu
