#include "stream_generator.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <unordered_map>

#include "json_text.h"
#include "reference_projector.h"
#include "util/digest.h"

namespace atlas2kudu::testkit {

namespace {

using namespace std::string_literals;

// Pools. The hostile strings are deliberate: every one must survive SQL quoting and unescaping.
const std::vector<std::string> kTypeNames = {"hive_table", "DataSet", "hdfs_path", "kafka_topic",
                                             "we'ird\"type"};
const std::vector<std::string> kQualifiedNames = {
    "db.t1@cl",
    "db.t2@cl",
    "it's \"quoted\"@cl",
    "back\\slash\\@cl",
    "multi\nline\r\t@cl",
    "ctrl\x01\x1f\x7f@cl",
    "nul\0byte@cl"s,
    "\xc3\xbc"
    "mlaut.\xe6\x97\xa5\xe6\x9c\xac.\xf0\x9f\x98\x80@cl",
    "%_like\\%\\_@cl",
    "db.t10@cl",
};
const std::vector<std::string> kNames = {"t1",           "t'2",   "n\\3",         "line\nfeed",
                                         "tab\tand\x02", "z\0z"s, "\xe2\x82\xac", ""};
const std::vector<std::string> kTagNames = {"PII",   "PII_EMAIL", "GDPR",
                                            "Tier1", "ta'g\\x",   "t\xc3\xa4g"};
const std::vector<std::string> kLabels = {"r:owns", "links", "", "r\\'q"};
const std::vector<std::string> kRelTypes = {"owns", "links_t", "lineage"};
const std::vector<std::string> kAttrNames = {"owner",
                                             "createTime",
                                             "description",
                                             "size",
                                             "gr\xc3\xb6\xc3\x9f"
                                             "e",
                                             "path",
                                             "a"};
const std::vector<std::string> kAttrValues = {
    "\"a\"",
    "\"b\"",
    R"("it's \"x\"")",
    R"("back\\slash")",
    R"("line\nbreak\ttab")",
    R"("nul\u0000ctl\u001f")",
    "\"\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80\"",
    R"("\u00e9\/")",
    "1",
    "1.0",
    "1e3",
    "-0",
    "1E+2",
    "0.10",
    "123456789012345678901234567890",
    "-9223372036854775809",
    "true",
    "false",
    R"([1,2.0,"x",null])",
    R"({"k":[1e-7,{"z":"\""}],"a":{}})",
    "\"\"",
};

struct Rng {
  std::mt19937_64 engine;
  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(engine() % n); }
  bool chance(int percent) { return static_cast<int>(engine() % 100) < percent; }
  template <class T>
  const T& pick(const std::vector<T>& v, std::size_t limit) {
    return v[below(std::min(limit, v.size()))];
  }
};

struct EntityState {
  bool created = false;  // created and not deleted since
  bool deleted = false;
  bool ever = false;  // any event so far
  std::string type;
  std::optional<std::string> qn;
  std::vector<Classification> tags;
};

struct EdgeKey {
  std::size_t src, dst;
  std::string label, rel_type;
};

class Generator {
 public:
  Generator(std::uint64_t seed, const GeneratorConfig& c) : rng_{std::mt19937_64(seed)}, c_(c) {
    time_ = c_.start_time_us;
    states_.resize(c_.guids * 2);
  }

  std::vector<Event> run() {
    while (out_.size() < c_.length) step();
    out_.resize(c_.length);
    return std::move(out_);
  }

 private:
  // ---- pools
  std::size_t live_guid() { return rng_.below(c_.guids); }
  std::size_t fresh_guid() {
    for (std::size_t i = c_.guids; i < states_.size(); ++i) {
      if (!states_[i].ever) return i;
    }
    return live_guid();
  }
  const std::string& type() {
    return rng_.pick(kTypeNames, std::max<std::size_t>(1, c_.type_names));
  }
  const std::string& qn() {
    return rng_.pick(kQualifiedNames, std::max<std::size_t>(2, c_.qualified_names));
  }
  const std::string& tag() { return rng_.pick(kTagNames, std::max<std::size_t>(1, c_.tag_names)); }

  std::vector<Attribute> attributes(int max_count) {
    std::vector<Attribute> out;
    const std::size_t n = rng_.below(static_cast<std::size_t>(max_count) + 1);
    for (std::size_t i = 0; i < n; ++i) {
      const std::string& name = rng_.pick(kAttrNames, kAttrNames.size());
      if (std::any_of(out.begin(), out.end(), [&](const Attribute& a) { return a.name == name; })) {
        continue;  // one value per name, as in a JSON object
      }
      std::string value = rng_.pick(kAttrValues, kAttrValues.size());
      if (c_.big_values && rng_.chance(15)) {
        const char letter = static_cast<char>('a' + rng_.below(26));
        const std::size_t length = 200 + rng_.below(1800);
        value = "\"" + std::string(length, letter) + "\"";
      }
      out.push_back({name, value});
    }
    return out;
  }

  void tick() {
    const std::size_t r = rng_.below(100);
    if (r < 8) return;  // same timestamp
    if (r < 13 && time_ > 2000) {
      time_ -= 1000 * static_cast<std::int64_t>(1 + rng_.below(2));  // backwards
      return;
    }
    time_ += 1000 * static_cast<std::int64_t>(1 + rng_.below(3));
  }

  Event base(Operation op, std::size_t g) {
    tick();
    Event e;
    e.op = op;
    e.guid = generator_guid(g);
    e.event_time_us = time_;
    return e;
  }

  void emit(Event e) {
    e.audit_seq = content_audit_seq(e);
    out_.push_back(std::move(e));
  }

  // ---- entity events
  void header(std::size_t g, Operation op, std::optional<std::string> type_name,
              std::optional<std::string> qualified_name, bool with_name, int max_attrs) {
    EntityState& s = states_[g];
    Event e = base(op, g);
    e.type_name = type_name ? *type_name : (s.type.empty() ? type() : s.type);
    e.qualified_name = std::move(qualified_name);
    if (with_name) e.name = rng_.pick(kNames, kNames.size());
    e.attributes = attributes(max_attrs);
    if (is_classification_op(op)) e.classifications = s.tags;
    s.ever = true;
    s.type = e.type_name;
    if (e.qualified_name) s.qn = e.qualified_name;
    if (op == Operation::kEntityCreate) {
      s.created = true;
      s.deleted = false;
    }
    emit(std::move(e));
  }

  void create(std::size_t g) {
    // One draw per statement: the order of a call's arguments is the compiler's choice. The
    // draws go right to left, as GCC made them, so the pinned stream stays.
    const bool with_name = rng_.chance(80);
    const std::string& q = qn();
    header(g, Operation::kEntityCreate, type(), q, with_name, 3);
  }

  void update(std::size_t g) {
    const bool with_qn = rng_.chance(50);
    const bool retype = rng_.chance(15);
    const bool with_name = rng_.chance(40);
    const std::optional<std::string> q =
        with_qn ? std::optional(rng_.chance(30) && states_[g].qn ? *states_[g].qn : qn())
                : std::nullopt;
    header(g, Operation::kEntityUpdate, retype ? std::optional(type()) : std::nullopt, q, with_name,
           3);
  }

  void type_change(std::size_t g) {
    std::string t = type();
    if (t == states_[g].type)
      t = kTypeNames[(std::find(kTypeNames.begin(), kTypeNames.end(), t) - kTypeNames.begin() + 1) %
                     std::max<std::size_t>(2, c_.type_names)];
    header(g, Operation::kEntityUpdate, t, std::nullopt, false, 1);
  }

  void remove(std::size_t g) {
    EntityState& s = states_[g];
    Event e = base(Operation::kEntityDelete, g);
    e.type_name = s.type.empty() ? type() : s.type;
    e.qualified_name = s.qn;
    e.attributes = attributes(2);  // headers of deletes carry attributes that must NOT be merged
    s.ever = true;
    s.created = false;
    s.deleted = true;
    emit(std::move(e));
  }

  void classify(std::size_t g, Operation op, std::vector<Classification> tags) {
    states_[g].tags = std::move(tags);
    const bool with_name = rng_.chance(50);
    header(g, op, std::nullopt, states_[g].qn ? states_[g].qn : std::optional(qn()), with_name, 1);
  }

  std::vector<Classification> random_tags(std::size_t g) {
    std::vector<Classification> tags;
    const std::size_t n = rng_.below(4);
    for (std::size_t i = 0; i < n; ++i) {
      Classification c;
      c.type_name = tag();
      c.entity_guid = rng_.chance(25) ? generator_guid(live_guid()) : generator_guid(g);
      c.attributes_json = rng_.chance(50) ? "{}" : "{\"confidence\":0.9,\"s\":\"v'\\\\\"}";
      tags.push_back(c);
      if (rng_.chance(15)) tags.push_back(c);  // Atlas may repeat a name
    }
    return tags;
  }

  // ---- relationships
  void relationship(Operation op, const EdgeKey& k, bool status_deleted) {
    Event e = base(op, 0);
    e.guid = Guid{};
    if (rng_.chance(70)) {
      e.guid = generator_guid(
          1000 + (static_cast<std::uint64_t>(sha256_prefix_i64(k.label + k.rel_type)) % 7) * 64 +
          k.src * 8 + k.dst);
      e.relationship.guid = e.guid;
    }
    e.type_name = k.rel_type;
    e.relationship.type_name = k.rel_type;
    e.relationship.label = k.label;
    e.relationship.end1 = {generator_guid(k.src),
                           states_[k.src].type.empty() ? kTypeNames[0] : states_[k.src].type};
    e.relationship.end2 = {generator_guid(k.dst),
                           states_[k.dst].type.empty() ? kTypeNames[1] : states_[k.dst].type};
    e.relationship.status_deleted = status_deleted;
    emit(std::move(e));
  }

  EdgeKey random_edge() {
    EdgeKey k{live_guid(), live_guid(),
              rng_.pick(kLabels, std::max<std::size_t>(1, c_.edge_labels)),
              rng_.pick(kRelTypes, kRelTypes.size())};
    return k;
  }

  void link(const EdgeKey& k) {
    relationship(rng_.chance(80) ? Operation::kRelationshipCreate : Operation::kRelationshipUpdate,
                 k, false);
    edges_.push_back(k);
  }

  void unlink() {
    if (edges_.empty()) {
      link(random_edge());
      return;
    }
    const std::size_t i = rng_.below(edges_.size());
    const EdgeKey k = edges_[i];
    edges_.erase(edges_.begin() + static_cast<std::ptrdiff_t>(i));
    if (rng_.chance(50)) {
      relationship(Operation::kRelationshipDelete, k, false);
    } else {
      relationship(Operation::kRelationshipUpdate, k, true);
    }
  }

  // ---- one move
  void step() {
    const std::size_t r = rng_.below(100);
    const std::size_t g = live_guid();
    if (r < 14) {
      create(g);
    } else if (r < 30) {
      update(g);
    } else if (r < 35) {
      type_change(g);
    } else if (r < 40) {
      // Direct trade of qualifiedNames between two entities of one type.
      const std::size_t h = live_guid();
      if (h == g) return;
      const std::string a = states_[g].qn.value_or(qn());
      const std::string b = states_[h].qn.value_or(qn());
      const std::string t = states_[g].type.empty() ? type() : states_[g].type;
      header(g, Operation::kEntityUpdate, t, b, false, 0);
      header(h, Operation::kEntityUpdate, t, a, false, 0);
    } else if (r < 44) {
      // Trade via a temporary name.
      const std::size_t h = live_guid();
      if (h == g) return;
      const std::string a = states_[g].qn.value_or(qn());
      const std::string b = states_[h].qn.value_or(qn());
      const std::string t = states_[g].type.empty() ? type() : states_[g].type;
      header(g, Operation::kEntityUpdate, t, "tmp." + a, false, 0);
      header(h, Operation::kEntityUpdate, t, a, false, 0);
      header(g, Operation::kEntityUpdate, t, b, false, 0);
    } else if (r < 50) {
      // Delete, then recreate the same (type, qn) under a new guid.
      if (!states_[g].qn) create(g);
      const EntityState before = states_[g];
      remove(g);
      const std::size_t n = fresh_guid();
      header(n, Operation::kEntityCreate, before.type, before.qn, true, 2);
    } else if (r < 55) {
      remove(g);
    } else if (r < 63) {
      std::vector<Classification> tags = random_tags(g);
      classify(g,
               rng_.chance(50) ? Operation::kClassificationAdd : Operation::kClassificationUpdate,
               std::move(tags));
    } else if (r < 67) {
      // A tag set that shrinks, then becomes empty.
      auto tags = random_tags(g);
      Classification c{tag(), generator_guid(g), "{}"};
      tags.push_back(c);
      tags.push_back({kTagNames[0], generator_guid(live_guid()), "{}"});
      classify(g, Operation::kClassificationAdd, tags);
      tags.pop_back();
      classify(g, Operation::kClassificationDelete, tags);
      classify(g, Operation::kClassificationDelete, {});
    } else if (r < 70) {
      // Events of a guid before its create.
      const std::size_t n = fresh_guid();
      if (rng_.chance(50)) {
        const std::optional<std::string> q = rng_.chance(50) ? std::optional(qn()) : std::nullopt;
        header(n, Operation::kEntityUpdate, type(), q, true, 2);
      } else {
        states_[n].tags = random_tags(n);
        const std::string& q = qn();
        header(n, Operation::kClassificationAdd, type(), q, true, 1);
      }
      create(n);
    } else if (r < 80) {
      link(random_edge());
    } else if (r < 85) {
      unlink();
    } else if (r < 89) {
      // Edges around g, then g is deleted: the cascade must remove them from both tables.
      link({g, live_guid(), rng_.pick(kLabels, c_.edge_labels), kRelTypes[0]});
      link({live_guid(), g, rng_.pick(kLabels, c_.edge_labels), kRelTypes[1]});
      remove(g);
    } else if (r < 94) {
      if (!out_.empty()) out_.push_back(out_[rng_.below(out_.size())]);  // redelivery
    } else if (r < 97) {
      // Replay of the last few events (e.g. a consumer restarting from an older offset).
      const std::size_t k = std::min<std::size_t>(out_.size(), 2 + rng_.below(4));
      const std::size_t from = out_.size() - k;
      for (std::size_t i = 0; i < k; ++i) out_.push_back(out_[from + i]);
    } else {
      // Partial update: no qualifiedName, no name, only attributes.
      header(g, Operation::kEntityUpdate, std::nullopt, std::nullopt, false, 3);
    }
  }

  Rng rng_;
  GeneratorConfig c_;
  std::int64_t time_;
  std::vector<EntityState> states_;
  std::vector<EdgeKey> edges_;
  std::vector<Event> out_;
};

// ---- classification of a stream

bool has_odd_number(std::string_view json) {
  bool in_string = false;
  std::size_t digits = 0;
  for (std::size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      digits = 0;
      continue;
    }
    if (c >= '0' && c <= '9') {
      if (++digits >= 20) return true;
      continue;
    }
    if (digits > 0 && (c == 'e' || c == 'E')) return true;
    if (digits > 0 && c == '.' && i + 1 < json.size() && json[i + 1] == '0') return true;
    if (c == '-' && i + 1 < json.size() && json[i + 1] == '0' &&
        (i + 2 == json.size() || json[i + 2] == ',' || json[i + 2] == '}' || json[i + 2] == ']')) {
      return true;
    }
    digits = 0;
  }
  return false;
}

void classify_string(std::string_view s, std::set<Case>& out) {
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\'' || c == '"') out.insert(Case::kStringQuote);
    if (c == '\\') out.insert(Case::kStringBackslash);
    if (c == '\n') out.insert(Case::kStringNewline);
    if (c == 0) out.insert(Case::kStringNul);
    if ((c < 0x20 && c != '\n' && c != 0) || c == 0x7f) out.insert(Case::kStringControl);
    if (c >= 0x80) out.insert(Case::kStringNonAscii);
  }
}

std::string content_key(const Event& e) {
  std::string s = fmt::format("{}|{}|{}|{}|", to_string(e.op), e.guid.hex(),
                              json_quote(e.type_name), e.event_time_us);
  s += e.qualified_name ? json_quote(*e.qualified_name) : "-";
  s += '|';
  s += e.name ? json_quote(*e.name) : "-";
  s += "|{";
  for (const auto& a : e.attributes) s += json_quote(a.name) + ":" + a.json + ",";
  s += "}|[";
  for (const auto& c : e.classifications) {
    s += json_quote(c.type_name) + "@" + c.entity_guid.hex() + c.attributes_json + ",";
  }
  s += "]|";
  const Relationship& r = e.relationship;
  s += fmt::format("{}|{}|{}|{}>{}|{}>{}|{}", r.guid ? r.guid->hex() : "-", json_quote(r.type_name),
                   json_quote(r.label), r.end1.guid.hex(), json_quote(r.end1.type_name),
                   r.end2.guid.hex(), json_quote(r.end2.type_name), r.status_deleted);
  return s;
}

}  // namespace

std::string_view to_string(Case c) {
  static constexpr std::string_view names[] = {
      "rename",
      "type change",
      "type change without qualifiedName",
      "qualifiedName trade (direct)",
      "qualifiedName trade via temporary",
      "delete then recreate same qualifiedName",
      "update before create",
      "classification before create",
      "partial update without qualifiedName",
      "tag set shrinks to empty",
      "tag set shrinks",
      "duplicate tag in one set",
      "propagated tag",
      "edge cascade on delete",
      "RELATIONSHIP_DELETE",
      "RELATIONSHIP_UPDATE status DELETED",
      "redelivery",
      "replay",
      "same timestamp",
      "time goes backwards",
      "odd numbers",
      "string with quote",
      "string with backslash",
      "string with newline",
      "string with control character",
      "string with NUL",
      "string with non-ASCII",
  };
  static_assert(std::size(names) == static_cast<std::size_t>(Case::kCount));
  return names[static_cast<std::size_t>(c)];
}

Guid generator_guid(std::size_t i) {
  // "0000000i-0000-4000-8000-00000000000i" for i < 16, and alike beyond: valid v4-shaped UUIDs.
  Guid g;
  for (int b = 0; b < 4; ++b) g.bytes[b] = static_cast<std::uint8_t>(i >> (8 * (3 - b)));
  g.bytes[6] = 0x40;
  g.bytes[8] = 0x80;
  for (int b = 0; b < 4; ++b) g.bytes[12 + b] = static_cast<std::uint8_t>(i >> (8 * (3 - b)));
  return g;
}

std::int64_t content_audit_seq(const Event& event) {
  return sha256_prefix_i64(content_key(event));
}

namespace {

// Writes one record of an export. Objects are built as lists of members and laid out at the end
// of each object, so that shuffling and whitespace apply to every level alike.
class RecordWriter {
 public:
  RecordWriter(std::uint64_t seed, const ExportStyle& style)
      : rng_{std::mt19937_64(seed)}, style_(style) {}

  using Members = std::vector<std::pair<std::string, std::string>>;  // key, value JSON text

  std::string object(Members members) {
    if (style_.shuffle_members) std::shuffle(members.begin(), members.end(), rng_.engine);
    // Each draw (ws, str) in its own statement: the operands of + may be evaluated in either
    // order, and GCC and clang differ. The order is the one GCC chose (right to left), which
    // the pinned export records.
    std::string out = "{" + ws();
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (i > 0) out += spaced(",");
      const std::string colon = spaced(":");
      out += str(members[i].first);
      out += colon;
      out += members[i].second;
    }
    return out + ws() + "}";
  }

  std::string array(const std::vector<std::string>& items) {
    std::string out = "[" + ws();
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (i > 0) out += spaced(",");
      out += items[i];
    }
    return out + ws() + "]";
  }

  // A JSON string for `utf8`; now and then a plain ASCII letter as a \u escape.
  std::string str(std::string_view utf8) {
    std::string q = json_quote(utf8);
    if (!style_.random_escapes || !rng_.chance(20)) return q;
    std::string out;
    for (std::size_t i = 0; i < q.size(); ++i) {
      const char c = q[i];
      if (c == '\\') {  // keep an existing escape whole: \n, or \u001f
        const std::size_t n = q[i + 1] == 'u' ? 6 : 2;
        out += q.substr(i, n);
        i += n - 1;
      } else if (i > 0 && i + 1 < q.size() && std::isalpha(static_cast<unsigned char>(c)) &&
                 rng_.chance(30)) {
        out += fmt::format("\\u{:04X}", static_cast<unsigned>(c));
      } else {
        out += c;
      }
    }
    return out;
  }

  std::string guid(const Guid& g) {
    std::string text = g.dashed();
    if (style_.random_escapes && rng_.chance(10)) {
      std::transform(text.begin(), text.end(), text.begin(),
                     [](char c) { return static_cast<char>(std::toupper(c)); });
    }
    if (style_.random_escapes && rng_.chance(10)) std::erase(text, '-');
    return str(text);
  }

  // A JSON value text (compact, as events hold them) with random whitespace between its tokens.
  std::string value(std::string_view json) {
    if (!style_.random_whitespace) return std::string(json);
    std::string out;
    bool in_string = false;
    for (std::size_t i = 0; i < json.size(); ++i) {
      const char c = json[i];
      out += c;
      if (in_string) {
        if (c == '\\') out += json[++i];
        if (c == '"') in_string = false;
      } else if (c == '"') {
        in_string = true;
      } else if (c == '{' || c == '[' || c == ',' || c == ':') {
        out += ws();
      }
    }
    return out;
  }

  bool chance(int percent) { return rng_.chance(percent); }

 private:
  // `punctuation` between random whitespace; the whitespace after it is drawn first.
  std::string spaced(std::string_view punctuation) {
    const std::string after = ws();
    std::string out = ws();
    out += punctuation;
    return out + after;
  }

  std::string ws() {
    if (!style_.random_whitespace || rng_.chance(70)) return "";
    static const std::vector<std::string> kSpaces = {" ", "  ", "\t", " \t ", "\r"};
    return rng_.pick(kSpaces, kSpaces.size());
  }

  Rng rng_;
  const ExportStyle& style_;
};

std::string_view v1_operation(Operation op) {
  switch (op) {
    case Operation::kClassificationAdd:
      return "TRAIT_ADD";
    case Operation::kClassificationDelete:
      return "TRAIT_DELETE";
    case Operation::kClassificationUpdate:
      return "TRAIT_UPDATE";
    default:
      return to_string(op);
  }
}

// V1 carries a tag set as a map by name without entityGuid: only distinct, direct tags fit.
bool fits_v1(const Event& e) {
  if (is_relationship_op(e.op)) return false;
  std::set<std::string> names;
  for (const Classification& c : e.classifications) {
    if (c.entity_guid != e.guid || !names.insert(c.type_name).second) return false;
  }
  return true;
}

std::string write_record(const Event& e, std::uint64_t seed, const ExportStyle& style) {
  const std::string content = content_key(e);
  RecordWriter w(static_cast<std::uint64_t>(sha256_prefix_i64(fmt::format("{}|{}", seed, content))),
                 style);
  const std::int64_t ms = e.event_time_us / 1000;
  const bool v1 = fits_v1(e) && w.chance(style.legacy_v1_percent);

  RecordWriter::Members attrs;
  if (e.qualified_name) attrs.emplace_back("qualifiedName", w.str(*e.qualified_name));
  if (e.name) attrs.emplace_back("name", w.str(*e.name));
  for (const Attribute& a : e.attributes) attrs.emplace_back(a.name, w.value(a.json));

  RecordWriter::Members message;
  if (v1) {
    RecordWriter::Members traits;
    std::vector<std::string> names;
    for (const Classification& c : e.classifications) {
      traits.emplace_back(c.type_name,
                          w.object({{"jsonClass", w.str("org.apache.atlas.typesystem.json."
                                                        "InstanceSerialization$_Struct")},
                                    {"typeName", w.str(c.type_name)},
                                    {"values", w.value(c.attributes_json)}}));
      names.push_back(w.str(c.type_name));
    }
    RecordWriter::Members entity = {
        {"jsonClass", w.str("org.apache.atlas.typesystem.json.InstanceSerialization$_Reference")},
        {"id", w.object({{"jsonClass",
                          w.str("org.apache.atlas.typesystem.json.InstanceSerialization$_Id")},
                         {"id", w.guid(e.guid)},
                         {"version", "0"},
                         {"typeName", w.str(e.type_name)},
                         {"state", w.str("ACTIVE")}})},
        {"typeName", w.str(e.type_name)},
        {"values", w.object(std::move(attrs))},
        {"traitNames", w.array(names)},
        {"traits", w.object(std::move(traits))}};
    message = {{"type", w.str("ENTITY_NOTIFICATION_V1")},
               {"operationType", w.str(v1_operation(e.op))},
               {"entity", w.object(std::move(entity))}};
  } else if (is_relationship_op(e.op)) {
    const Relationship& r = e.relationship;
    const auto end = [&](const RelationshipEnd& x) {
      return w.object({{"guid", w.guid(x.guid)}, {"typeName", w.str(x.type_name)}});
    };
    RecordWriter::Members rel = {{"typeName", w.str(r.type_name)},
                                 {"label", w.str(r.label)},
                                 {"status", w.str(r.status_deleted ? "DELETED" : "ACTIVE")},
                                 {"end1", end(r.end1)},
                                 {"end2", end(r.end2)},
                                 {"propagateTags", w.str("NONE")}};
    if (r.guid) rel.emplace_back("guid", w.guid(*r.guid));
    message = {{"type", w.str("ENTITY_NOTIFICATION_V2")},
               {"operationType", w.str(to_string(e.op))},
               {"eventTime", std::to_string(ms)},
               {"relationship", w.object(std::move(rel))}};
  } else {
    std::vector<std::string> tags;
    for (const Classification& c : e.classifications) {
      tags.push_back(w.object({{"typeName", w.str(c.type_name)},
                               {"entityGuid", w.guid(c.entity_guid)},
                               {"attributes", w.value(c.attributes_json)},
                               {"propagate", "true"}}));
    }
    RecordWriter::Members entity = {{"typeName", w.str(e.type_name)},
                                    {"guid", w.guid(e.guid)},
                                    {"status", w.str("ACTIVE")},
                                    {"attributes", w.object(std::move(attrs))},
                                    {"displayText", w.str(e.qualified_name.value_or(""))}};
    if (is_classification_op(e.op) || w.chance(20)) {
      entity.emplace_back("classifications", w.array(tags));
    }
    message = {{"type", w.str("ENTITY_NOTIFICATION_V2")},
               {"operationType", w.str(to_string(e.op))},
               {"eventTime", std::to_string(ms)},
               {"entity", w.object(std::move(entity))}};
  }
  return w.object(
      {{"version", w.object({{"version", w.str("1.0.0")}, {"versionParts", w.array({"1"})}})},
       {"msgCompressionKind", w.str("NONE")},
       {"msgSplitIdx", "1"},
       {"msgSplitCount", "1"},
       {"msgSourceIP", w.str("10.0.0.1")},
       {"msgCreatedBy", w.str("")},
       {"msgCreationTime", std::to_string(ms)},
       {"spooled", "false"},
       {"message", w.object(std::move(message))}});
}

}  // namespace

std::string write_export(std::span<const Event> events, std::uint64_t seed,
                         const ExportStyle& style) {
  std::string out;
  for (const Event& e : events) out += write_record(e, seed, style) + "\n";
  return out;
}

std::optional<std::string> read_back_difference(std::span<const Event> written,
                                                std::span<const Event> read) {
  if (written.size() != read.size()) {
    return fmt::format("{} events written, {} read", written.size(), read.size());
  }
  const auto attributes = [](const Event& e) {
    std::vector<std::string> out;
    for (const Attribute& a : e.attributes)
      out.push_back(json_quote(a.name) + json_canonical(a.json));
    std::sort(out.begin(), out.end());
    return out;
  };
  const auto tags = [](const Event& e, bool as_set) {
    std::vector<std::string> out;
    for (const Classification& c : e.classifications) {
      out.push_back(json_quote(c.type_name) + c.entity_guid.hex() +
                    json_canonical(c.attributes_json));
    }
    if (as_set) std::sort(out.begin(), out.end());
    return out;
  };
  for (std::size_t i = 0; i < written.size(); ++i) {
    const Event& w = written[i];
    const Event& r = read[i];
    const bool same = w.op == r.op && w.guid == r.guid && w.type_name == r.type_name &&
                      w.qualified_name == r.qualified_name && w.name == r.name &&
                      w.event_time_us == r.event_time_us && w.relationship == r.relationship &&
                      attributes(w) == attributes(r) &&
                      tags(w, r.legacy_v1) == tags(r, r.legacy_v1);
    if (!same) {
      return fmt::format("event {} differs:\n  written {}\n  read    {}", i + 1, content_key(w),
                         content_key(r));
    }
  }
  return std::nullopt;
}

std::vector<Event> generate_stream(std::uint64_t seed, const GeneratorConfig& config) {
  return Generator(seed, config).run();
}

std::set<Case> classify_stream(std::span<const Event> events) {
  std::set<Case> out;
  struct State {
    std::optional<std::string> type, qn;
    bool created = false, deleted = false, seen = false, seen_update = false, seen_class = false;
    std::set<std::string> tags;
    std::optional<std::int64_t> last_time;
  };
  struct Move {
    Guid guid;
    std::string type, from, to;
  };
  std::unordered_map<Guid, State> states;
  std::vector<Move> moves;
  std::set<std::pair<std::string, std::string>> deleted_names;  // (type, qn) of deleted entities
  std::set<std::tuple<Guid, std::string, Guid>> edges;
  std::map<std::string, std::vector<std::size_t>> positions;
  std::vector<std::string> keys;

  for (std::size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    keys.push_back(content_key(e));
    auto& pos = positions[keys.back()];
    if (!pos.empty()) {
      out.insert(Case::kRedelivery);
      if (i > 0) {
        for (const std::size_t j : pos) {
          if (j > 0 && j + 1 < i && keys[j - 1] == keys[i - 1]) out.insert(Case::kReplay);
        }
      }
    }
    pos.push_back(i);

    for (const auto& a : e.attributes) {
      if (has_odd_number(a.json)) out.insert(Case::kOddNumbers);
    }
    classify_string(e.type_name, out);
    if (e.qualified_name) classify_string(*e.qualified_name, out);
    if (e.name) classify_string(*e.name, out);
    for (const auto& c : e.classifications) classify_string(c.type_name, out);
    if (is_relationship_op(e.op)) {
      const Relationship& r = e.relationship;
      classify_string(r.edge_label(), out);
      const auto key = std::make_tuple(r.end1.guid, r.edge_label(), r.end2.guid);
      const bool is_delete = e.op == Operation::kRelationshipDelete || r.status_deleted;
      if (is_delete) {
        if (edges.count(key)) {
          out.insert(e.op == Operation::kRelationshipDelete ? Case::kRelationshipDelete
                                                            : Case::kRelationshipUpdateDeleted);
        }
        edges.erase(key);
      } else {
        edges.insert(key);
      }
      continue;
    }

    State& s = states[e.guid];
    if (s.last_time) {
      if (*s.last_time == e.event_time_us) out.insert(Case::kSameTimestamp);
      if (*s.last_time > e.event_time_us) out.insert(Case::kTimeGoesBackwards);
    }
    s.last_time = e.event_time_us;

    if (e.op == Operation::kEntityDelete) {
      bool has_edge = false;
      for (const auto& [src, label, dst] : edges) has_edge |= (src == e.guid || dst == e.guid);
      if (has_edge) out.insert(Case::kEdgeCascadeOnDelete);
      std::erase_if(edges, [&](const auto& t) {
        return std::get<0>(t) == e.guid || std::get<2>(t) == e.guid;
      });
      if (s.type && s.qn) deleted_names.insert({*s.type, *s.qn});
      s.deleted = true;
      s.created = false;
      s.seen = true;
      continue;
    }

    if (e.op == Operation::kEntityCreate) {
      if (!s.created && !s.deleted && s.seen_update) out.insert(Case::kUpdateBeforeCreate);
      if (!s.created && !s.deleted && s.seen_class) out.insert(Case::kClassificationBeforeCreate);
      if (!s.seen && e.qualified_name && deleted_names.count({e.type_name, *e.qualified_name})) {
        out.insert(Case::kDeleteRecreateSameQn);
      }
    }
    if (e.op == Operation::kEntityUpdate) {
      if (!s.created) s.seen_update = true;
      if (!e.qualified_name && s.qn) out.insert(Case::kPartialUpdateWithoutQn);
    }
    if (is_classification_op(e.op)) {
      if (!s.created) s.seen_class = true;
      std::set<std::string> tags;
      for (const auto& c : e.classifications) {
        if (!tags.insert(c.type_name).second) out.insert(Case::kDuplicateTagInSet);
        if (c.entity_guid != e.guid) out.insert(Case::kPropagatedTag);
      }
      if (!s.tags.empty() && tags.empty()) out.insert(Case::kTagSetShrinksToEmpty);
      if (!tags.empty() && tags.size() < s.tags.size() &&
          std::includes(s.tags.begin(), s.tags.end(), tags.begin(), tags.end())) {
        out.insert(Case::kTagSetShrinks);
      }
      s.tags = std::move(tags);
    }
    if (s.type && *s.type != e.type_name) {
      out.insert(Case::kTypeChange);
      if (!e.qualified_name && s.qn) out.insert(Case::kTypeChangeWithoutQn);
    }
    if (e.qualified_name && s.qn && *s.qn != *e.qualified_name) {
      if (s.type && *s.type == e.type_name) out.insert(Case::kRename);
      // Trades: this move is B: from -> to.
      const Move now{e.guid, e.type_name, *s.qn, *e.qualified_name};
      for (std::size_t a = 0; a < moves.size(); ++a) {
        const Move& m = moves[a];
        if (m.guid == now.guid) continue;
        if (m.from == now.to && m.to == now.from) out.insert(Case::kQnTradeDirect);
        // Via temporary: A: x->t (m0), B: y->x (m), A: t->y (now) with A = now.guid.
        if (m.to == now.to) continue;
        for (std::size_t z = 0; z < a; ++z) {
          const Move& m0 = moves[z];
          if (m0.guid == now.guid && m0.to == now.from && m0.from == m.to && m.from == now.to) {
            out.insert(Case::kQnTradeViaTemporary);
          }
        }
      }
      moves.push_back(now);
    }
    s.type = e.type_name;
    if (e.qualified_name) s.qn = e.qualified_name;
    if (e.op == Operation::kEntityCreate) {
      s.created = true;
      s.deleted = false;
    }
    s.seen = true;
  }
  return out;
}

KuduStore generate_store(std::uint64_t seed, const CompileOptions& options, std::size_t events) {
  GeneratorConfig config;
  config.length = events;
  const auto stream = generate_stream(seed ^ 0x5eed5eed5eed5eedULL, config);
  return project(stream, options, KuduStore(options.key_encoding));
}

}  // namespace atlas2kudu::testkit
