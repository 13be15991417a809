// libFuzzer target: props_json, the one cell the compiler builds from many values. A stored cell
// is parsed back (parse_props), the attributes of an event merged into it and the cap applied
// (merge_attributes), as every window does for every entity.
//
// Input layout: two bytes of cap, then the stored cell's text up to a NUL byte, then attributes
// as NUL-separated name/value pairs. A value is used as written when it is a JSON number, else as
// a JSON string of its bytes. Pairs whose name or value is not valid UTF-8 are left out: the
// reader only ever hands the compiler valid JSON text.
//
// What must hold: parse_props never throws; what it accepts writes back to text it reads again
// as the same Props; after a merge the cell is within the cap, is valid (parses back), and keeps
// every member that was not dropped and no key twice.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "compile/props.h"
#include "input/json_text.h"
#include "util/json_writer.h"

using namespace atlas2kudu;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::size_t cap = 2 + (std::size_t{data[0]} << 8 | data[1]) % 4096;
  std::string_view rest(reinterpret_cast<const char*>(data + 2), size - 2);
  const std::size_t cell_end = rest.find('\0');
  const std::string_view cell = rest.substr(0, cell_end);
  rest = cell_end == std::string_view::npos ? std::string_view() : rest.substr(cell_end + 1);

  const std::optional<Props> stored = parse_props(cell);
  Props props;
  if (stored) {
    const std::optional<Props> again = parse_props(to_json(*stored));
    if (!again || *again != *stored) std::abort();
    props = *stored;
  }

  std::vector<Attribute> attributes;
  while (!rest.empty()) {
    const std::size_t name_end = rest.find('\0');
    const std::string_view name = rest.substr(0, name_end);
    rest = name_end == std::string_view::npos ? std::string_view() : rest.substr(name_end + 1);
    const std::size_t value_end = rest.find('\0');
    const std::string_view value = rest.substr(0, value_end);
    rest = value_end == std::string_view::npos ? std::string_view() : rest.substr(value_end + 1);
    if (!is_valid_utf8(name) || !is_valid_utf8(value)) continue;
    Attribute a;
    a.name = std::string(name);
    if (is_json_number(value)) {
      a.json = std::string(value);
    } else {
      append_json_string(value, a.json);
    }
    attributes.push_back(std::move(a));
  }
  merge_attributes(props, attributes, cap);
  const std::string text = to_json(props);
  if (text.size() > cap) std::abort();
  const std::optional<Props> back = parse_props(text);
  if (!back || *back != props) std::abort();
  for (std::size_t i = 1; i < props.size(); ++i) {
    if (!(props.key(i - 1) < props.key(i))) std::abort();
  }
  return 0;
}
