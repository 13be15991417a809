#include "atlas2kudu/event.h"

#include <doctest/doctest.h>

#include <unordered_set>

TEST_SUITE_BEGIN("event");

using namespace atlas2kudu;

TEST_CASE("Guid accepts dashed and plain hex in any case") {
  const auto a = Guid::parse("0b6f3c1e-2a4d-4e8f-9c1b-5d7e8f9a0b1c");
  const auto b = Guid::parse("0B6F3C1E2A4D4E8F9C1B5D7E8F9A0B1C");
  REQUIRE(a);
  REQUIRE(b);
  CHECK(*a == *b);
  CHECK(a->hex() == "0b6f3c1e2a4d4e8f9c1b5d7e8f9a0b1c");
  CHECK(a->dashed() == "0b6f3c1e-2a4d-4e8f-9c1b-5d7e8f9a0b1c");
}

TEST_CASE("Guid rejects everything that is not a UUID") {
  for (const char* bad :
       {"", "-72583599150177287", "0b6f3c1e-2a4d-4e8f-9c1b-5d7e8f9a0b1",
        "0b6f3c1e-2a4d-4e8f-9c1b-5d7e8f9a0b1cc", "0b6f3c1e+2a4d-4e8f-9c1b-5d7e8f9a0b1c",
        "0b6f3c1e2a4d4e8f9c1b5d7e8f9a0b1g", "0b6f3c1e-2a4d4e8f-9c1b-5d7e8f9a0b1c",
        " 0b6f3c1e2a4d4e8f9c1b5d7e8f9a0b1"}) {
    CAPTURE(bad);
    CHECK_FALSE(Guid::parse(bad));
  }
}

TEST_CASE("Guid hashes spread") {
  std::unordered_set<Guid> set;
  for (int i = 0; i < 1000; ++i) {
    Guid g;
    g.bytes[15] = static_cast<std::uint8_t>(i);
    g.bytes[14] = static_cast<std::uint8_t>(i >> 8);
    set.insert(g);
  }
  CHECK(set.size() == 1000);
}

TEST_CASE("operation names round-trip and classify") {
  for (std::size_t i = 0; i < kOperationCount; ++i) {
    const auto op = static_cast<Operation>(i);
    CHECK(parse_operation(to_string(op)) == op);
  }
  CHECK_FALSE(parse_operation("ENTITY_PURGE"));
  CHECK(is_entity_op(Operation::kEntityDelete));
  CHECK(is_classification_op(Operation::kClassificationUpdate));
  CHECK(is_relationship_op(Operation::kRelationshipDelete));
  CHECK_FALSE(is_relationship_op(Operation::kClassificationUpdate));
}

TEST_SUITE_END();
