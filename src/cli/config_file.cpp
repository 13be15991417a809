#include "cli/config_file.h"

#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <string_view>

#include "atlas2kudu/error.h"
#include "cli/suggest.h"
#include "util/ascii_case.h"

namespace atlas2kudu {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string unquote(std::string_view v) {
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
    v = v.substr(1, v.size() - 2);
  }
  return std::string(v);
}

}  // namespace

std::string canonical_option_key(std::string key) {
  std::replace(key.begin(), key.end(), '_', '-');
  return key;
}

std::string canonical_config_key(const std::string& key) {
  return canonical_option_key(to_lower_ascii(key));
}

int parse_config_bool(const std::string& value) {
  const std::string v = to_lower_ascii(value);
  if (v == "true" || v == "yes" || v == "on" || v == "1") return 1;
  if (v == "false" || v == "no" || v == "off" || v == "0") return 0;
  return -1;
}

ConfigFile read_config_file(const std::string& path, const std::vector<std::string>& commands) {
  const auto cannot_read = [&](const char* why) {
    return Error(ErrorCategory::kNoInput,
                 fmt::format("{}: cannot read the --config file: {}", path, why));
  };
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) throw cannot_read("Is a directory");
  std::ifstream in(path);
  if (!in) throw cannot_read(std::strerror(errno));
  ConfigFile config;
  std::vector<ConfigEntry>* section = nullptr;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string where = fmt::format("{}:{}", path, number);
    // A byte-order mark, as some Windows editors write, is not part of the first line.
    if (number == 1 && line.starts_with("\xEF\xBB\xBF")) line.erase(0, 3);
    // A NUL would end the value where an option reads it (a C string), unseen; a text file has
    // none, so the file is not one (or is damaged).
    if (const std::size_t nul = line.find('\0'); nul != std::string::npos) {
      throw Error(ErrorCategory::kUsage,
                  fmt::format("{}: a NUL byte at column {}: not a text file", where, nul + 1));
    }
    const std::string_view text = trim(line);
    if (text.empty() || text.front() == '#' || text.front() == ';') continue;
    if (text.front() == '[') {
      if (text.back() != ']') {
        throw Error(ErrorCategory::kUsage,
                    fmt::format("{}: a section header ends with ']'", where));
      }
      const std::string name = std::string(trim(text.substr(1, text.size() - 2)));
      if (name == "atlas2kudu") {
        section = &config.common;
      } else if (name == "atlas2kudu.query_options") {
        section = &config.query_options;
      } else if (name.starts_with("atlas2kudu.") && name.size() > 11) {
        section = &config.per_command[name.substr(11)];
        config.per_command_where.emplace(name.substr(11), where);
      } else {
        // Section names are case-sensitive, as in impala-shell's file; one written in capitals
        // or mistyped gets its near match, and impala-shell's own ([impala],
        // [impala.query_options]) a pointer.
        const std::string lower = to_lower_ascii(name);
        constexpr std::string_view kPrefix = "atlas2kudu.";
        std::vector<std::string> subsections = commands;  // what may follow "atlas2kudu."
        subsections.push_back("query_options");
        std::optional<std::string> near;
        if (lower.starts_with(kPrefix) && lower.size() > kPrefix.size()) {
          // Near by what follows the prefix alone, as [atlas2kudu.NAME] is told (cli.cpp):
          // [ATLAS2KUDU.run] is no typo of [atlas2kudu.ddl].
          if (const auto m = closest_match(lower.substr(kPrefix.size()), subsections)) {
            near = std::string(kPrefix) + *m;
          }
        } else {
          std::vector<std::string> sections = {"atlas2kudu"};
          for (const std::string& s : subsections) sections.push_back(std::string(kPrefix) + s);
          near = closest_match(lower, sections);  // [atlas2kudu.], [atlas2kudu_ddl]
        }
        std::string hint;
        if (near) {
          hint = fmt::format(" (did you mean [{}]?)", *near);
        } else if (lower == "impala" || lower == "impala.query_options" ||
                   lower == "impala.query-options") {
          hint = fmt::format(" (impala-shell's section: here it is [atlas2kudu{}])",
                             lower.size() > 6 ? ".query_options" : "");
        }
        throw Error(ErrorCategory::kUsage,
                    fmt::format("{}: unknown section [{}]{} (sections: [atlas2kudu], "
                                "[atlas2kudu.COMMAND], [atlas2kudu.query_options])",
                                where, name, hint));
      }
      continue;
    }
    const std::size_t eq = text.find('=');
    if (eq == std::string_view::npos || trim(text.substr(0, eq)).empty()) {
      throw Error(ErrorCategory::kUsage,
                  fmt::format("{}: expected KEY = VALUE, a [section] or a # comment", where));
    }
    if (section == nullptr) {
      throw Error(ErrorCategory::kUsage,
                  fmt::format("{}: KEY = VALUE before any section; start the file with "
                              "[atlas2kudu]",
                              where));
    }
    section->push_back(ConfigEntry{std::string(trim(text.substr(0, eq))),
                                   unquote(trim(text.substr(eq + 1))), where});
  }
  if (in.bad()) throw cannot_read(std::strerror(errno));
  // A command the run executes (a password or token helper) from a file anyone may write, or that
  // another user owns (and may make writable at any time), would run another's command under the
  // account of the cron job: refused, as ssh refuses such a config. Found here, before the command
  // could run.
  const bool foreign_owner = st.st_uid != ::geteuid() && st.st_uid != 0;
  if ((st.st_mode & S_IWOTH) != 0 || foreign_owner) {
    const auto names_a_command = [](const ConfigEntry& e) {
      const std::string key = canonical_config_key(e.key);
      return key == "ldap-password-cmd" || key == "jwt-cmd";
    };
    std::vector<const ConfigEntry*> entries;
    for (const ConfigEntry& e : config.common) entries.push_back(&e);
    for (const auto& [command, section] : config.per_command) {
      for (const ConfigEntry& e : section) entries.push_back(&e);
    }
    for (const ConfigEntry* e : entries) {
      if (!names_a_command(*e)) continue;
      if (foreign_owner) {
        throw Error(ErrorCategory::kUsage,
                    fmt::format("{}: {} is a command this run would execute, and {} belongs to "
                                "another user (uid {}): chown it to this run's user (uid {}) or "
                                "root",
                                e->where, e->key, path, st.st_uid, ::geteuid()));
      }
      throw Error(ErrorCategory::kUsage,
                  fmt::format("{}: {} is a command this run would execute, and anyone may write "
                              "to {} (mode {:04o}): chmod o-w {}",
                              e->where, e->key, path, st.st_mode & 07777, path));
    }
  }
  return config;
}

}  // namespace atlas2kudu
