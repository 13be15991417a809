// props_json merge and cap (--props-max-bytes), including scenario 14 and the audit detail.
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <set>

#include "atlas2kudu/reader.h"
#include "compile/fold.h"
#include "compile/props.h"

TEST_SUITE_BEGIN("compiler_props");

using namespace atlas2kudu;

namespace {

std::vector<std::pair<std::string, std::string>> members(const Props& p) {
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t i = 0; i < p.size(); ++i) out.emplace_back(p.key(i), p.value(i));
  return out;
}

}  // namespace

TEST_CASE("merge: event wins per key, keys sorted, values kept as written") {
  Props p;
  merge_attributes(p, std::vector<Attribute>{{"owner", "\"a\""}, {"createTime", "5"}}, 1000);
  CHECK(to_json(p) == R"({"createTime":5,"owner":"a"})");
  merge_attributes(p, std::vector<Attribute>{{"owner", "\"b\""}, {"n", "1.50e3"}, {"n", "7"}},
                   1000);
  CHECK(to_json(p) == R"({"createTime":5,"n":7,"owner":"b"})");
  merge_attributes(p, std::vector<Attribute>{{"k\"\n", "{\"x\":[1,2]}"}}, 1000);
  CHECK(to_json(p) == R"({"createTime":5,"k\"\n":{"x":[1,2]},"n":7,"owner":"b"})");
}

TEST_CASE("merge agrees with a map model: updates in place, new keys, repeats, keys back") {
  // Random events over a small key alphabet (so that keys repeat within an event, exist already,
  // or are new; up to 24 attributes, past the small-event path), merged without a cap, against
  // a std::map model of the rule: the last value per key wins, a key that comes back leaves
  // "_truncated", an attribute named "_truncated" is listed as dropped.
  std::mt19937 rng(7);
  const std::vector<std::string> keys{"a", "b", "c", "owner", "name2", "zz", "_truncated"};
  for (int round = 0; round < 2000; ++round) {
    Props p;
    std::map<std::string, std::string> model;
    std::set<std::string> model_truncated;
    if (rng() % 3 == 0) {
      p = *parse_props(R"({"_truncated":["b","zz"]})");
      model_truncated = {"b", "zz"};
    }
    for (int event = 0; event < 4; ++event) {
      std::vector<Attribute> attrs(rng() % 25);
      for (Attribute& a : attrs) {
        a.name = keys[rng() % (round % 2 ? 3 : keys.size())];
        a.json = std::to_string(rng() % 1000);
      }
      merge_attributes(p, attrs, 1 << 20);
      for (const Attribute& a : attrs) {
        if (a.name == "_truncated") {
          model_truncated.insert(a.name);
        } else {
          model[a.name] = a.json;
          model_truncated.erase(a.name);
        }
      }
      const std::vector<std::pair<std::string, std::string>> want(model.begin(), model.end());
      CHECK(members(p) == want);
      CHECK(p.truncated() ==
            std::vector<std::string>(model_truncated.begin(), model_truncated.end()));
    }
  }
}

TEST_CASE("cap drops the largest values first and lists them sorted (scenario 14)") {
  Props p;
  const std::string big = "\"" + std::string(1200, 'x') + "\"";
  const std::string big2 = "\"" + std::string(1100, 'z') + "\"";
  merge_attributes(p, std::vector<Attribute>{{"big", big}, {"small", "\"s\""}, {"n", "1"}}, 1000);
  CHECK(to_json(p) == R"({"_truncated":["big"],"n":1,"small":"s"})");
  merge_attributes(p, std::vector<Attribute>{{"other", "2"}}, 1000);
  merge_attributes(p, std::vector<Attribute>{{"big2", big2}}, 1000);
  CHECK(to_json(p) == R"({"_truncated":["big","big2"],"n":1,"other":2,"small":"s"})");
  // A dropped key that comes back small is no longer truncated.
  merge_attributes(p, std::vector<Attribute>{{"big", "0"}}, 1000);
  CHECK(to_json(p) == R"({"_truncated":["big2"],"big":0,"n":1,"other":2,"small":"s"})");
}

TEST_CASE("cap ties are broken by key, and the result always fits") {
  Props p;
  const std::vector<Attribute> three{{"b", "\"12345678\""}, {"a", "\"87654321\""}, {"c", "1"}};
  merge_attributes(p, three, 30);
  CHECK(to_json(p) == R"({"_truncated":["a","b"],"c":1})");
  // Below the size of the full list of dropped keys: the sorted prefix that fits.
  Props tiny;
  merge_attributes(tiny, three, 22);
  CHECK(to_json(tiny) == R"({"_truncated":["a"]})");
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    Props q;
    const std::size_t cap = 2 + rng() % 120;
    std::vector<Attribute> attrs;
    for (int i = 0, n = static_cast<int>(rng() % 8); i < n; ++i) {
      attrs.push_back({std::string(1 + rng() % 4, static_cast<char>('a' + rng() % 5)),
                       std::to_string(rng() % 100000)});
    }
    merge_attributes(q, attrs, cap);
    const std::string json = to_json(q);
    CAPTURE(json);
    CHECK(json.size() <= cap);
    const auto back = parse_props(json);
    REQUIRE(back);
    CHECK(*back == q);
  }
}

TEST_CASE("parse_props reads stored cells, including escapes and _truncated") {
  const auto p = parse_props(R"( {"b" : [1, {"x":"}"}], "_truncated":["z"], "a\u00e9":"v\"" } )");
  REQUIRE(p);
  REQUIRE(p->size() == 2);
  CHECK(p->key(0) == "a\xc3\xa9");
  CHECK(p->value(0) == R"("v\"")");
  CHECK(p->value(1) == R"([1, {"x":"}"}])");
  CHECK(p->truncated() == std::vector<std::string>{"z"});
  CHECK_FALSE(parse_props("[1]"));
  CHECK_FALSE(parse_props(R"({"a":1)"));
  CHECK_FALSE(parse_props(R"({"a":1} x)"));
  // Invalid JSON anywhere in the cell, also inside values the merge only copies.
  CHECK_FALSE(parse_props(R"({"a":tru})"));
  CHECK_FALSE(parse_props(R"({"a":01})"));
  CHECK_FALSE(parse_props(R"({"a":[1,,2]})"));
  CHECK_FALSE(parse_props(R"({"a":{1}})"));
  CHECK_FALSE(parse_props(R"({"_truncated":[1]})"));
  CHECK_FALSE(parse_props("{\"a\":\"\xff\"}"));  // invalid UTF-8
  // As deep as the largest --max-json-depth lets a run store (the cell is level 1), no deeper.
  const auto nested = [](std::size_t levels) {
    return "{\"a\":" + std::string(levels - 1, '[') + std::string(levels - 1, ']') + "}";
  };
  CHECK(parse_props(nested(kLargestMaxJsonDepth)));
  CHECK_FALSE(parse_props(nested(kLargestMaxJsonDepth + 1)));
}

TEST_CASE("audit detail names what the event carried and respects the cap") {
  Event e;
  e.op = Operation::kClassificationAdd;
  e.qualified_name = "q";
  e.attributes = {{"owner", "\"a\""}};
  e.classifications = {{"PII", Guid{}, "{}"}, {"PII", Guid{}, "{}"}, {"A", Guid{}, "{}"}};
  CHECK(audit_detail_json(e, 1000) ==
        R"({"attributes":["owner","qualifiedName"],"classifications":["A","PII"]})");
  CHECK(audit_detail_json(e, 60) == R"({"_truncated":true,"attributes":2,"classifications":2})");
  CHECK(audit_detail_json(e, 10) == "{}");
  CHECK(audit_detail_json(e, 1000) ==
        R"({"attributes":["owner","qualifiedName"],"classifications":["A","PII"]})");
}

TEST_CASE("audit details looked up again are those of their own event") {
  // Events of one type share their details; nothing else may: names with any bytes, which of
  // name/qualifiedName were given, entity vs classification events, tags, the cap.
  Event one;
  one.op = Operation::kEntityUpdate;
  one.attributes = {{std::string("a\0b", 3), "1"}};
  Event two = one;
  two.attributes = {{"a", "1"}, {"b", "2"}};
  CHECK(audit_detail_json(one, 1000) == R"({"attributes":["a\u0000b"]})");
  CHECK(audit_detail_json(two, 1000) == R"({"attributes":["a","b"]})");
  CHECK(audit_detail_json(one, 1000) == R"({"attributes":["a\u0000b"]})");
  Event three = two;
  three.attributes = {{"ab", "1"}, {"c", "2"}};
  Event four = two;
  four.attributes = {{"a", "1"}, {"bc", "2"}};
  CHECK(audit_detail_json(three, 1000) == R"({"attributes":["ab","c"]})");
  CHECK(audit_detail_json(four, 1000) == R"({"attributes":["a","bc"]})");
  Event named = two;
  named.name = "n";
  CHECK(audit_detail_json(named, 1000) == R"({"attributes":["a","b","name"]})");
  Event tagged = two;
  tagged.op = Operation::kClassificationDelete;
  CHECK(audit_detail_json(tagged, 1000) == R"({"attributes":["a","b"],"classifications":[]})");
  tagged.classifications = {{"T", Guid{}, "{}"}};
  CHECK(audit_detail_json(tagged, 1000) == R"({"attributes":["a","b"],"classifications":["T"]})");
  CHECK(audit_detail_json(two, 23) == "{}");  // 24 bytes in full
  CHECK(audit_detail_json(two, 1000) == R"({"attributes":["a","b"]})");
  // More distinct name lists than the cache holds: each still gets its own.
  Event many;
  many.op = Operation::kEntityCreate;
  for (int i = 0; i < 10000; ++i) {
    many.attributes = {{"k" + std::to_string(i), "1"}};
    REQUIRE(audit_detail_json(many, 1000) == "{\"attributes\":[\"k" + std::to_string(i) + "\"]}");
  }
  CHECK(audit_detail_json(one, 1000) == R"({"attributes":["a\u0000b"]})");
}

TEST_SUITE_END();
