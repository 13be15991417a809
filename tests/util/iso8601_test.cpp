// ISO-8601 times as V1 notifications write them (systemAttributes.modifiedTime), or with an
// offset from UTC.
#include "util/iso8601.h"

#include <doctest/doctest.h>

TEST_SUITE_BEGIN("iso8601");

using namespace atlas2kudu;

TEST_CASE("the form Atlas writes, with and without a fraction") {
  CHECK(parse_iso8601_micros("1970-01-01T00:00:00.000Z") == 0);
  CHECK(parse_iso8601_micros("2017-03-25T20:07:12.000Z") == 1490472432000000);
  CHECK(parse_iso8601_micros("2017-03-25T20:07:12Z") == 1490472432000000);
  CHECK(parse_iso8601_micros("2017-03-25T20:07:12.5Z") == 1490472432500000);
  CHECK(parse_iso8601_micros("2017-03-25T20:07:12.123456Z") == 1490472432123456);
  CHECK(parse_iso8601_micros("2017-03-25T20:07:12.1234567Z") == 1490472432123456);  // truncated
  CHECK(parse_iso8601_micros("1969-12-31T23:59:59.000Z") == -1000000);
  CHECK(parse_iso8601_micros("2024-02-29T00:00:00Z") == 1709164800000000);
}

TEST_CASE("an offset from UTC instead of Z is taken into account") {
  CHECK(parse_iso8601_micros("2017-03-25T22:07:12.000+02:00") == 1490472432000000);
  CHECK(parse_iso8601_micros("2017-03-25T14:37:12-05:30") == 1490472432000000);
  CHECK(parse_iso8601_micros("2017-03-25T20:07:12+00:00") == 1490472432000000);
  CHECK(parse_iso8601_micros("1970-01-01T00:30:00.5+01:00") == -1800000000 + 500000);
  CHECK_FALSE(parse_iso8601_micros("2017-03-25T20:07:12+0100"));
  CHECK_FALSE(parse_iso8601_micros("2017-03-25T20:07:12+01"));
  CHECK_FALSE(parse_iso8601_micros("2017-03-25T20:07:12+24:00"));
  CHECK_FALSE(parse_iso8601_micros("2017-03-25T20:07:12+01:60"));
  CHECK_FALSE(parse_iso8601_micros("2017-03-25T20:07:12+01:00Z"));
}

TEST_CASE("anything else is refused, not guessed") {
  CHECK_FALSE(parse_iso8601_micros(""));
  CHECK_FALSE(parse_iso8601_micros("yesterday"));
  CHECK_FALSE(parse_iso8601_micros("2017-02-30T20:07:12.000Z"));  // no such day
  CHECK_FALSE(parse_iso8601_micros("2023-02-29T00:00:00Z"));      // not a leap year
  CHECK_FALSE(parse_iso8601_micros("2017-13-01T00:00:00Z"));
  CHECK_FALSE(parse_iso8601_micros("2017-03-25T24:00:00Z"));
  CHECK_FALSE(parse_iso8601_micros("2017-03-25 20:07:12.000Z"));
  CHECK_FALSE(parse_iso8601_micros("2017-03-25T20:07:12.000"));
  CHECK_FALSE(parse_iso8601_micros("2017-03-25T20:07:12.Z"));
  CHECK_FALSE(parse_iso8601_micros("2017-03-25T20:07:12 +01:00"));
  CHECK_FALSE(parse_iso8601_micros("2017-03-25T20:07:12.000Zjunk"));
  CHECK_FALSE(parse_iso8601_micros("2017-3-25T20:07:12.000Z"));
}

TEST_SUITE_END();
