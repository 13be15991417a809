// --config FILE: the command line's options written in a file, in the style of impala-shell's
// --config_file, so that cron lines stay short and credentials helpers stay out of crontabs.
//
//   # /etc/atlas2kudu/apply.conf
//   [atlas2kudu]                      ; every subcommand that has the option
//   impalad = impalad.example.com:21050
//   ssl = true
//   kerberos = true
//   kerberos_host_fqdn = impalad.example.com
//   [atlas2kudu.apply]                ; only `apply`
//   checkpoint = /var/lib/atlas2kudu/entities.ckpt
//   max_rejects = 100
//   [atlas2kudu.query_options]        ; each line one -Q KEY=VALUE
//   MEM_LIMIT = 2g
//
// Keys are the long option names without "--", spelled with "_" or "-". A flag takes true or
// false (also yes/no, on/off, 1/0); a repeatable option takes one value per line. Options given
// on the command line win over the file. Lines starting with '#' or ';' are comments; values
// may be quoted with '"' or '\'' to keep leading or trailing spaces.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace atlas2kudu {

struct ConfigEntry {
  std::string key;    // as written, e.g. "max_rejects"
  std::string value;  // quotes removed
  std::string where;  // "FILE:LINE", for messages
};

struct ConfigFile {
  std::vector<ConfigEntry> common;                              // [atlas2kudu]
  std::map<std::string, std::vector<ConfigEntry>> per_command;  // [atlas2kudu.<subcommand>]
  std::map<std::string, std::string> per_command_where;         // its first header's FILE:LINE
  std::vector<ConfigEntry> query_options;                       // [atlas2kudu.query_options]
};

// Reads and checks the syntax of `path`. Throws Error(kUsage) naming FILE:LINE for a line that
// is not a section, a key = value pair, a comment or blank, for a section other than the three
// above (with a near match among them, `commands` naming the subcommands, when there is one), and
// for a key outside any section; Error(kNoInput) if the file cannot be read.
ConfigFile read_config_file(const std::string& path, const std::vector<std::string>& commands = {});

// "max_rejects" and "max-rejects" -> "max-rejects"; the form the command line registers first.
std::string canonical_option_key(std::string key);

// A --config key in that form, whatever its case: "Max_Rejects" -> "max-rejects". Keys are
// case-insensitive, as in impala-shell's file (Python's ConfigParser lowers them); option names
// on the command line are not.
std::string canonical_config_key(const std::string& key);

// A flag value from the file: 1 for true/yes/on/1, 0 for false/no/off/0 (any case), -1 for
// anything else.
int parse_config_bool(const std::string& value);

}  // namespace atlas2kudu
