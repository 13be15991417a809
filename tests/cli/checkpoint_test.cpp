// Resume points: the reader's progress() after a window, and resume_from() on a rerun.
#include "cli/checkpoint.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/error.h"
#include "atlas2kudu/reader.h"
#include "input/byte_source.h"
#include "test_support.h"

TEST_SUITE_BEGIN("checkpoint");

using namespace atlas2kudu;
using namespace atlas2kudu::testing;

namespace {

std::string line(int i) {
  return envelope(entity_message("ENTITY_UPDATE",
                                 "{\"qualifiedName\":\"q" + std::to_string(i) + "\"}",
                                 ",\"eventTime\":" + std::to_string(1000 + i))) +
         "\n";
}

std::vector<std::unique_ptr<ByteSource>> sources(
    const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::unique_ptr<ByteSource>> out;
  for (const auto& [name, text] : files) out.push_back(memory_byte_source(name, text, 97));
  return out;
}

// Reads `n` events (or all), returns their qualified names.
std::vector<std::string> take(Reader& reader, std::size_t n = static_cast<std::size_t>(-1)) {
  std::vector<std::string> out;
  for (Event e; out.size() < n && reader.next(e);) out.push_back(e.qualified_name.value_or(""));
  return out;
}

struct CheckpointedRun {
  std::vector<std::string> read;  // the events' qualified names
  ReadStats stats;
};

// One run over `files` with the checkpoint at `path`, recorded after its one window.
CheckpointedRun checkpointed_run(const std::string& path,
                                 const std::vector<std::pair<std::string, std::string>>& files) {
  RejectSink sink(RejectPolicy{}, nullptr);
  Reader reader(sources(files), sink);
  CheckpointFile checkpoint(path, reader);
  const std::vector<std::string> read = take(reader);
  if (!read.empty()) checkpoint.window_applied(WindowInfo{1, 1, read.size(), "", ""}, reader);
  checkpoint.run_completed(reader);
  return {read, reader.stats()};
}

// The five chunk records of the split message in tests/data, each with its line end.
std::vector<std::string> split_message_chunks() {
  const std::string split =
      slurp(std::string(ATLAS2KUDU_TEST_DATA) + "/notifications/split-message.jsonl");
  std::vector<std::string> chunks;
  for (std::size_t at = 0; at < split.size();) {
    const std::size_t nl = split.find('\n', at);
    chunks.push_back(split.substr(at, nl - at + 1));
    at = nl + 1;
  }
  REQUIRE(chunks.size() == 5);
  return chunks;
}

}  // namespace

TEST_CASE("progress after a window, then resume: nothing applied twice, nothing lost") {
  std::string a, b;
  for (int i = 0; i < 5; ++i) a += line(i);
  for (int i = 5; i < 9; ++i) b += line(i);
  RejectSink sink(RejectPolicy{}, nullptr);

  Reader first(sources({{"a.jsonl", a}, {"b.jsonl", b}}), sink);
  CHECK(take(first, 7) == std::vector<std::string>{"q0", "q1", "q2", "q3", "q4", "q5", "q6"});
  const InputProgress p = first.progress();
  REQUIRE(p.sources.size() == 2);
  CHECK(p.sources[0].next_record == 5);
  CHECK(p.sources[0].complete);
  CHECK(p.sources[1].next_record == 2);
  CHECK_FALSE(p.sources[1].complete);

  // The rerun gets the same inputs and skips the applied records, by identity not by name.
  Reader second(sources({{"renamed-a.jsonl", a}, {"b.jsonl", b}}), sink);
  second.resume_from(p);
  CHECK(take(second) == std::vector<std::string>{"q7", "q8"});
  CHECK(second.stats().skipped == 7);
  CHECK(second.stats().skipped_by_offset == 0);  // by file position

  // A different file under an applied file's name is read from the start.
  std::string c;
  for (int i = 20; i < 23; ++i) c += line(i);
  Reader third(sources({{"a.jsonl", c}}), sink);
  third.resume_from(p);
  CHECK(take(third) == std::vector<std::string>{"q20", "q21", "q22"});
  CHECK(third.stats().skipped == 0);
}

TEST_CASE("a pending split message holds the resume point at its first chunk") {
  const std::vector<std::string> chunks = split_message_chunks();
  // line(0), chunk0, line(1), chunks 1-4, line(2)
  const std::string text =
      line(0) + chunks[0] + line(1) + chunks[1] + chunks[2] + chunks[3] + chunks[4] + line(2);
  RejectSink sink(RejectPolicy{}, nullptr);
  Reader reader(sources({{"s.jsonl", text}}), sink);
  reader.resume_from({});
  CHECK(take(reader, 2) == std::vector<std::string>{"q0", "q1"});
  const InputProgress held = reader.progress();
  CHECK(held.sources[0].next_record == 1);  // chunk 0 (record 1) is still pending
  // The digest of record 0 alone: the file read again with another record 0 is read whole.
  Reader changed(sources({{"s.jsonl", line(9) + text.substr(line(0).size())}}), sink);
  changed.resume_from(held);
  CHECK(take(changed) == std::vector<std::string>{"q9", "q1", "sales.orders@cl1", "q2"});
  CHECK(changed.stats().resume_mismatches == 1);
  CHECK(take(reader, 1) == std::vector<std::string>{"sales.orders@cl1"});
  CHECK(reader.progress().sources[0].next_record == 7);

  // Resuming from the held mark re-reads chunk 0 and line(1), and completes the message.
  Reader rerun(sources({{"s.jsonl", text}}), sink);
  rerun.resume_from(held);
  CHECK(take(rerun) == std::vector<std::string>{"q1", "sales.orders@cl1", "q2"});
}

TEST_CASE("a split message completed while another waits is read whole again on resume") {
  // M's chunks around N's first and an update; N still waits when the window ends. Resuming at
  // N's first chunk read M's last four without its first: M was lost, the update applied after
  // it again (its rows taken back), and each later run stopped at M's "incomplete" chunks.
  const std::vector<std::string> m = split_message_chunks();
  std::vector<std::string> n;
  for (const std::string& chunk : m) {
    std::string renamed = chunk;
    const std::size_t id = renamed.find("9c8e71_0");
    REQUIRE(id != std::string::npos);
    renamed.replace(id, 8, "9c8e72_0");
    n.push_back(renamed);
  }
  // records: 0 q0, 1 M0, 2 N0, 3 q1, 4-7 M1-M4, 8 q2, 9-12 N1-N4, 13 q3
  const std::string text = line(0) + m[0] + n[0] + line(1) + m[1] + m[2] + m[3] + m[4] + line(2) +
                           n[1] + n[2] + n[3] + n[4] + line(3);
  RejectSink sink(RejectPolicy{}, nullptr);
  Reader reader(sources({{"s.jsonl", text}}), sink);
  reader.resume_from({});
  CHECK(take(reader, 3) == std::vector<std::string>{"q0", "q1", "sales.orders@cl1"});
  const InputProgress held = reader.progress();
  CHECK(held.sources[0].next_record == 1);  // M's first chunk, not N's (2)
  CHECK(held.sources[0].records_digest.size() == 32);
  Reader rerun(sources({{"s.jsonl", text}}), sink);
  rerun.resume_from(held);
  CHECK(take(rerun) ==
        std::vector<std::string>{"q1", "sales.orders@cl1", "q2", "sales.orders@cl1", "q3"});
  CHECK(rerun.stats().rejected == 0);
  CHECK(rerun.stats().skipped == 1);
  CHECK(rerun.stats().resume_mismatches == 0);
}

TEST_CASE("an input is skipped only as far as its records are those applied; else read whole") {
  // Records 0-599, then a file with the same first 500 (so the same first 64 KiB: its identity)
  // that goes on with others, as a second full export of a topic whose partitions interleave
  // otherwise: it was taken for the first, and its records 500-599 were never applied.
  std::string a, same_start, first_half;
  std::vector<std::string> other_names;
  for (int i = 0; i < 600; ++i) a += line(i);
  for (int i = 0; i < 500; ++i) same_start += line(i);
  for (int i = 0; i < 300; ++i) first_half += line(i);
  REQUIRE(first_half.size() > 65536);
  for (int i = 0; i < 500; ++i) other_names.push_back("q" + std::to_string(i));
  for (int i = 1000; i < 1100; ++i) {
    same_start += line(i);
    other_names.push_back("q" + std::to_string(i));
  }
  RejectSink sink(RejectPolicy{}, nullptr);
  Reader first(sources({{"a.jsonl", a}}), sink);
  first.resume_from({});
  CHECK(take(first).size() == 600);
  const InputProgress p = first.progress();
  REQUIRE(p.sources[0].records_digest.size() == 32);
  CHECK(p.sources[0].records_digest.find_first_not_of("0123456789abcdef") == std::string::npos);

  Reader other(sources({{"b.jsonl", same_start}}), sink);
  other.resume_from(p);
  CHECK(take(other) == other_names);
  CHECK(other.stats().skipped == 0);
  CHECK(other.stats().records == 600);
  CHECK(other.stats().resume_mismatches == 1);
  CHECK(other.stats().first_resume_mismatch ==
        "b.jsonl, taken for a.jsonl: its first 600 records are not those an earlier run applied");
  CHECK(other.progress().sources[0].next_record == 600);

  // Shorter now (rewritten): read whole too.
  Reader shorter(sources({{"a.jsonl", first_half}}), sink);
  shorter.resume_from(p);
  CHECK(take(shorter).size() == 300);
  CHECK(shorter.stats().skipped == 0);
  CHECK(shorter.stats().first_resume_mismatch ==
        "a.jsonl, taken for a.jsonl: it has 300 records, fewer than the 600 an earlier run "
        "applied");

  // Grown (records appended): only the new ones, whatever its name now.
  Reader grown(sources({{"renamed.jsonl", a + line(600) + line(601)}}), sink);
  grown.resume_from(p);
  CHECK(take(grown) == std::vector<std::string>{"q600", "q601"});
  CHECK(grown.stats().skipped == 600);
  CHECK(grown.stats().resume_mismatches == 0);

  // A file under 64 KiB that has grown has another identity: it is recognised by its name, and
  // its records tell whether it is the same file. Another file under that name is read whole.
  const std::string small = line(0) + line(1) + line(2);
  Reader s1(sources({{"s.jsonl", small}}), sink);
  s1.resume_from({});
  CHECK(take(s1).size() == 3);
  Reader s2(sources({{"s.jsonl", small + line(3)}}), sink);
  s2.resume_from(s1.progress());
  CHECK(take(s2) == std::vector<std::string>{"q3"});
  CHECK(s2.stats().skipped == 3);
  Reader s3(sources({{"s.jsonl", line(7) + line(8) + line(9) + line(10)}}), sink);
  s3.resume_from(s1.progress());
  CHECK(take(s3) == std::vector<std::string>{"q7", "q8", "q9", "q10"});
  CHECK(s3.stats().resume_mismatches == 1);
  // The name as a path: ./s.jsonl is s.jsonl (it was compared as typed, and all of it applied
  // again).
  Reader s4(sources({{"./s.jsonl", small + line(3) + line(4)}}), sink);
  s4.resume_from(s1.progress());
  CHECK(take(s4) == std::vector<std::string>{"q3", "q4"});
  CHECK(s4.stats().skipped == 3);
  // A checkpoint of an earlier release has no digests: identity alone, as it did then.
  InputProgress earlier = p;
  earlier.sources[0].records_digest.clear();
  Reader trusted(sources({{"b.jsonl", same_start}}), sink);
  trusted.resume_from(earlier);
  CHECK(take(trusted).empty());
  CHECK(trusted.stats().skipped == 600);
}

TEST_CASE("with a resume point, the inputs after one that ends in a record cut short wait") {
  // Regression: b.jsonl was read and applied after a.jsonl's cut-short record, and the next run,
  // reading on in the grown a.jsonl, applied a's rest after b: rows went back to a's older state.
  std::string a;
  std::vector<std::string> names;
  for (int i = 0; i < 300; ++i) {  // over the 64 KiB its identity reads: the grown file is a.jsonl
    a += line(i);
    names.push_back("q" + std::to_string(i));
  }
  const std::string last = line(300);
  const std::string cut = a + last.substr(0, last.size() / 2);
  const std::string b = line(500) + line(501);
  const std::string c = line(600);
  RejectSink sink(RejectPolicy{.max_rejects = 10, .reject_file = {}}, nullptr);
  Reader first(sources({{"a.jsonl", cut}, {"b.jsonl", b}, {"c.jsonl", c}}), sink);
  first.resume_from(InputProgress{});
  CHECK(take(first) == names);
  CHECK(first.stats().rejected == 1);
  CHECK(first.stats().inputs_held_back == 2);
  CHECK(first.stats().first_held_back == "b.jsonl");
  CHECK(first.stats().held_back_behind == "a.jsonl");
  const InputProgress p = first.progress();
  REQUIRE(p.sources.size() == 1);
  CHECK(p.sources[0].next_record == 300);
  CHECK_FALSE(p.sources[0].complete);

  // a.jsonl complete now: its rest first, then b and c.
  Reader rerun(sources({{"a.jsonl", a + last}, {"b.jsonl", b}, {"c.jsonl", c}}), sink);
  rerun.resume_from(p);
  CHECK(take(rerun) == std::vector<std::string>{"q300", "q500", "q501", "q600"});
  CHECK(rerun.stats().inputs_held_back == 0);
  CHECK(rerun.stats().resume_mismatches == 0);  // a.jsonl's digest: of the records before the cut

  // Without a resume point (compile, check, apply without --checkpoint) nothing is read again
  // later, and every input is read.
  Reader once(sources({{"a.jsonl", cut}, {"b.jsonl", b}}), sink);
  names.insert(names.end(), {"q500", "q501"});
  CHECK(take(once) == names);
  CHECK(once.stats().inputs_held_back == 0);
}

TEST_CASE("chunks still incomplete at end of input are rejected, and a rerun reads them again") {
  // Regression: the chunks were rejected at end of input and the resume point moved past them, so
  // a rerun over the grown file (or a later Kafka export) never completed the message.
  const std::vector<std::string> chunks = split_message_chunks();
  // A file still being written: 300 lines (more than the 64 KiB its identity reads, so that the
  // grown file is the same file), chunks 0-1, line(1000); the rest comes later.
  std::string written;
  std::vector<std::string> names;
  for (int i = 0; i < 300; ++i) {
    written += line(i);
    names.push_back("q" + std::to_string(i));
  }
  REQUIRE(written.size() > 65536);
  written += chunks[0] + chunks[1] + line(1000);
  names.push_back("q1000");
  const std::string grown = written + chunks[2] + chunks[3] + chunks[4] + line(1001);
  RejectSink sink(RejectPolicy{.max_rejects = 10, .reject_file = {}}, nullptr);
  Reader first(sources({{"g.jsonl", written}}), sink);
  CHECK(take(first) == names);
  CHECK(first.stats().rejected == 2);
  const InputProgress p = first.progress();
  CHECK(p.sources[0].next_record == 300);  // chunk 0
  CHECK_FALSE(p.sources[0].complete);

  Reader rerun(sources({{"g.jsonl", grown}}), sink);
  rerun.resume_from(p);
  CHECK(take(rerun) == std::vector<std::string>{"q1000", "sales.orders@cl1", "q1001"});
  CHECK(rerun.stats().skipped == 300);

  // A message that began in an earlier input and did not complete in those after it is passed
  // for good: holding it back would have every later run read all that follows it again.
  Reader two(sources({{"g.jsonl", written}, {"h.jsonl", line(2000)}}), sink);
  names.push_back("q2000");
  CHECK(take(two) == names);
  CHECK(two.stats().rejected == 2);
  const InputProgress passed = two.progress();
  CHECK(passed.sources[0].complete);
  CHECK(passed.sources[0].next_record == 303);
  CHECK(passed.sources[1].complete);
  CHECK(rerun.stats().rejected == 0);
  CHECK(rerun.progress().sources[0].complete);

  // The same over Kafka: the partition's resume offset stays at the first chunk, so the next
  // export, which overlaps this one, brings the message whole.
  const auto at = [](int offset, const std::string& record) {
    return "Partition:0\tOffset:" + std::to_string(offset) + "\t" + record;
  };
  const std::string export1 = at(7, line(0)) + at(8, chunks[0]) + at(9, line(1));
  std::string export2 = at(8, chunks[0]) + at(9, line(1));
  for (int i = 1; i < 5; ++i) export2 += at(9 + i, chunks[static_cast<std::size_t>(i)]);
  Reader k1(sources({{"k1.txt", export1}}), sink);
  CHECK(take(k1) == std::vector<std::string>{"q0", "q1"});
  const InputProgress kp = k1.progress();
  CHECK(kp.kafka_next_offset.at({"", 0}) == 8);
  Reader k2(sources({{"k2.txt", export2}}), sink);
  k2.resume_from(kp);
  CHECK(take(k2) == std::vector<std::string>{"q1", "sales.orders@cl1"});
  CHECK(k2.stats().rejected == 0);
}

TEST_CASE("at end of input each incomplete message is judged alone: held if a chunk came last") {
  // Regression: one message that began in an earlier input let every incomplete message pass,
  // also one that began in the last input (which a later export may complete).
  const std::vector<std::string> chunks = split_message_chunks();
  std::string orphan = chunks[0];
  orphan.replace(orphan.find("_0\""), 3, "_1\"");  // chunk 0 of another message
  const auto at = [](int offset, const std::string& record) {
    return "Partition:0\tOffset:" + std::to_string(offset) + "\t" + record;
  };
  const std::string a = at(1, line(0)) + at(2, orphan) + at(3, line(1));
  const std::string b = at(4, line(2)) + at(5, chunks[0]) + at(6, chunks[1]) + at(7, line(3));
  RejectSink sink(RejectPolicy{.max_rejects = 10, .reject_file = {}, .append = false}, nullptr);
  // An empty last input does not count: b is the last input that had records.
  Reader first(sources({{"a.txt", a}, {"b.txt", b}, {"empty.txt", ""}}), sink);
  CHECK(take(first) == std::vector<std::string>{"q0", "q1", "q2", "q3"});
  CHECK(first.stats().rejected == 3);
  const InputProgress p = first.progress();
  CHECK(p.sources[0].complete);  // the orphan chunk of a.txt is passed
  CHECK(p.sources[0].next_record == 3);
  CHECK_FALSE(p.sources[1].complete);  // b.txt from its chunk 0
  CHECK(p.sources[1].next_record == 1);
  CHECK(p.kafka_next_offset.at({"", 0}) == 5);

  // A message that began in an earlier input but was still getting chunks in the last one is
  // waited for too: its first chunk is read again.
  Reader spread(sources({{"e1.jsonl", line(10) + chunks[0]}, {"e2.jsonl", chunks[1] + line(11)}}),
                sink);
  CHECK(take(spread) == std::vector<std::string>{"q10", "q11"});
  const InputProgress held = spread.progress();
  CHECK_FALSE(held.sources[0].complete);
  CHECK(held.sources[0].next_record == 1);
  Reader rest(sources({{"e1.jsonl", line(10) + chunks[0]},
                       {"e2.jsonl", chunks[1] + line(11)},
                       {"e3.jsonl", chunks[2] + chunks[3] + chunks[4] + line(12)}}),
              sink);
  rest.resume_from(held);
  CHECK(take(rest) == std::vector<std::string>{"q11", "sales.orders@cl1", "q12"});
  CHECK(rest.stats().rejected == 0);

  // The next export overlaps back to the chunk and completes the message.
  std::string c = at(5, chunks[0]) + at(6, chunks[1]) + at(7, line(3));
  for (int i = 2; i < 5; ++i) c += at(6 + i, chunks[static_cast<std::size_t>(i)]);
  Reader second(sources({{"c.txt", c}}), sink);
  second.resume_from(p);
  CHECK(take(second) == std::vector<std::string>{"q3", "sales.orders@cl1"});
  CHECK(second.stats().rejected == 0);
}

TEST_CASE("the chunks of a completed message advance their own partitions") {
  // Regression: only the completing record's partition advanced, so an overlapping export read
  // chunk 0 again, held it, and rejected it as incomplete on every rerun.
  const std::vector<std::string> chunks = split_message_chunks();
  const auto at = [](int partition, int offset, const std::string& record) {
    return "Partition:" + std::to_string(partition) + "\tOffset:" + std::to_string(offset) + "\t" +
           record;
  };
  std::string x1 = at(0, 4, line(0)) + at(0, 5, chunks[0]);
  for (int i = 1; i < 5; ++i) x1 += at(1, 19 + i, chunks[static_cast<std::size_t>(i)]);
  x1 += at(1, 24, line(1));
  RejectSink sink(RejectPolicy{}, nullptr);
  Reader first(sources({{"x1.txt", x1}}), sink);
  CHECK(take(first) == std::vector<std::string>{"q0", "sales.orders@cl1", "q1"});
  const InputProgress p = first.progress();
  CHECK(p.kafka_next_offset.at({"", 0}) == 6);
  CHECK(p.kafka_next_offset.at({"", 1}) == 25);
  const std::string x2 =
      at(0, 5, chunks[0]) + at(0, 6, line(2)) + at(1, 24, line(1)) + at(1, 25, line(3));
  Reader second(sources({{"x2.txt", x2}}), sink);
  second.resume_from(p);
  CHECK(take(second) == std::vector<std::string>{"q2", "q3"});
  CHECK(second.stats().skipped == 2);
  CHECK(second.stats().rejected == 0);
}

TEST_CASE("a split message far from complete stops holding the resume point back") {
  // An orphan chunk early in a long export pinned every window's checkpoint to it, so a run
  // stopped by --deadline started again there, and a deadline-bound backfill never advanced.
  const std::vector<std::string> chunks = split_message_chunks();
  std::string text = line(0) + chunks[0];
  for (int i = 1; i <= 10; ++i) text += line(i);
  ReaderLimits limits;
  limits.split_wait_records = 3;
  RejectSink sink(RejectPolicy{.max_rejects = 10, .reject_file = {}, .append = false}, nullptr);
  Reader reader(sources({{"o.jsonl", text}}), sink, limits);
  CHECK(take(reader, 3) == std::vector<std::string>{"q0", "q1", "q2"});
  CHECK(reader.progress().sources[0].next_record == 1);  // still waited for
  CHECK(take(reader, 2).size() == 2);
  CHECK(reader.progress().sources[0].next_record == 6);  // given up: past 3 records
  CHECK(take(reader).size() == 6);
  CHECK(reader.stats().rejected == 1);  // rejected at the end, as incomplete
  CHECK(reader.progress().sources[0].complete);
}

TEST_CASE("pending chunks in several partitions each hold their partition back on resume") {
  // Regression: progress() pulled back only the partition of the earliest pending chunk, so a
  // chunk pending in another partition was below that partition's applied offset and skipped on
  // resume, and its message rejected as incomplete.
  const std::string split =
      slurp(std::string(ATLAS2KUDU_TEST_DATA) + "/notifications/split-message.jsonl");
  std::vector<std::string> a, b;
  for (std::size_t at = 0; at < split.size();) {
    const std::size_t nl = split.find('\n', at);
    a.push_back(split.substr(at, nl - at + 1));
    std::string other = a.back();
    other.replace(other.find("_0\""), 3, "_1\"");  // the same message under another msgId
    b.push_back(other);
    at = nl + 1;
  }
  const auto at = [](int partition, int offset, const std::string& record) {
    return "Partition:" + std::to_string(partition) + "\tOffset:" + std::to_string(offset) + "\t" +
           record;
  };
  std::string text = at(0, 10, a[0]) + at(1, 20, b[0]) + at(0, 11, line(0)) + at(1, 21, line(1));
  std::string rest;
  for (int i = 1; i < 5; ++i) rest += at(0, 11 + i, a[i]) + at(1, 21 + i, b[i]);
  RejectSink sink(RejectPolicy{}, nullptr);
  Reader first(sources({{"p.txt", text + rest}}), sink);
  CHECK(take(first, 2) == std::vector<std::string>{"q0", "q1"});
  const InputProgress p = first.progress();
  CHECK(p.sources[0].next_record == 0);
  CHECK(p.kafka_next_offset.at({"", 0}) == 10);
  CHECK(p.kafka_next_offset.at({"", 1}) == 20);

  Reader rerun(sources({{"p.txt", text + rest}}), sink);
  rerun.resume_from(p);
  // Both messages complete; the two events after their first chunks are read again (applying a
  // window twice is safe), nothing is rejected.
  CHECK(take(rerun) ==
        std::vector<std::string>{"q0", "q1", "sales.orders@cl1", "sales.orders@cl1"});
  CHECK(rerun.stats().rejected == 0);
  CHECK(rerun.stats().skipped == 0);
}

TEST_CASE("progress adds no offset for a partition with nothing applied") {
  const std::string split =
      slurp(std::string(ATLAS2KUDU_TEST_DATA) + "/notifications/split-message.jsonl");
  const std::string chunk0 = split.substr(0, split.find('\n') + 1);
  RejectSink sink(RejectPolicy{}, nullptr);
  Reader reader(sources({{"p.txt", "Partition:3\tOffset:7\t" + chunk0 + line(0)}}), sink);
  CHECK(take(reader, 1) == std::vector<std::string>{"q0"});
  CHECK(reader.progress().kafka_next_offset.empty());
}

TEST_CASE("kcat offsets: a new export overlapping an applied one skips the applied offsets") {
  const std::string kcat = slurp(std::string(ATLAS2KUDU_TEST_DATA) + "/notifications/kcat.jsonl");
  RejectSink sink(RejectPolicy{}, nullptr);
  Reader first(sources({{"export-1.jsonl", kcat}}), sink);
  CHECK(take(first, 2).size() == 2);
  const InputProgress p = first.progress();
  CHECK(p.kafka_next_offset.at({"ATLAS_ENTITIES", 0}) == 102);

  // A second export with different framing (so a different identity) of the same offsets.
  Reader second(sources({{"export-2.jsonl", "\n" + kcat}}), sink);
  second.resume_from(p);
  CHECK(take(second).size() == 2);
  CHECK(second.stats().skipped == 2);
  CHECK(second.stats().skipped_by_offset == 2);
  CHECK(second.progress().kafka_next_offset.at({"ATLAS_ENTITIES", 0}) == 104);
}

TEST_CASE("a last record cut short at end of input is read again by the next run") {
  // A file read while still being copied: its last record has no line end and is cut short.
  // (Over 64 KiB, so that its identity, a hash of its first 64 KiB, does not change as it grows.)
  constexpr int kLines = 400;
  std::string whole;
  for (int i = 0; i < kLines; ++i) whole += line(i);
  REQUIRE(whole.size() > 65536 + line(0).size());
  const std::string copying = whole.substr(0, whole.size() - 40);
  RejectSink sink(RejectPolicy{.max_rejects = 10, .reject_file = {}}, nullptr);
  Reader first(sources({{"a.jsonl", copying}, {"b.jsonl", line(1000)}}), sink);
  const std::vector<std::string> read = take(first);
  CHECK(read.size() == kLines);  // all but the last, and b's
  CHECK(read.back() == "q1000");
  CHECK(first.stats().rejected == 1);
  const InputProgress p = first.progress();
  CHECK(p.sources[0].next_record == kLines - 1);
  CHECK_FALSE(p.sources[0].complete);
  CHECK(p.sources[1].complete);
  // The copy finished: the rerun reads the record it rejected, and nothing else twice.
  Reader second(sources({{"a.jsonl", whole}}), sink);
  second.resume_from(p);
  CHECK(take(second) == std::vector<std::string>{"q" + std::to_string(kLines - 1)});
  CHECK(second.stats().skipped == kLines - 1);
  CHECK(second.progress().sources[0].complete);

  // A bad last record that has its line end is rejected and passed for good.
  Reader third(sources({{"c.jsonl", line(0) + "{\"version\":\n"}}), sink);
  CHECK(take(third) == std::vector<std::string>{"q0"});
  CHECK(third.progress().sources[0].next_record == 2);
  CHECK(third.progress().sources[0].complete);
}

TEST_CASE("Kafka positions this run has read are passed over as replayed; nothing else is") {
  const auto at = [](int partition, int offset, int i) {
    return "Partition:" + std::to_string(partition) + "\tOffset:" + std::to_string(offset) + "\t" +
           line(i);
  };
  // A newer export, then an older one that overlaps it at offset 10, and one new offset.
  std::string newer, older;
  for (int i = 0; i < 5; ++i) newer += at(0, 10 + i, i);
  for (int i = 0; i < 3; ++i) older += at(0, 8 + i, 20 + i);
  older += at(0, 15, 5);
  RejectSink sink(RejectPolicy{}, nullptr);
  Reader reader(sources({{"newer.txt", newer}, {"older.txt", older}}), sink);
  // Offset 10 was read: passed over. Offsets 8 and 9 never were: applied (in input order, and
  // counted as out of order), never dropped.
  CHECK(take(reader) == std::vector<std::string>{"q0", "q1", "q2", "q3", "q4", "q20", "q21", "q5"});
  CHECK(reader.stats().replayed == 1);
  // Where the first one is, to look at what overlapped (line 3 of older.txt, after its prefix).
  CHECK(reader.stats().first_replayed ==
        "older.txt:3:" +
            std::to_string(at(0, 8, 20).size() + at(0, 9, 21).size() +
                           std::string("Partition:0\tOffset:10\t").size()) +
            " (partition 0, offset 10)");
  CHECK(reader.stats().out_of_order == 2);
  CHECK(reader.stats().skipped == 0);
  CHECK(reader.stats().records == 9);
  // Other partitions are not compared with partition 0; a console record with an offset but no
  // partition (or the reverse) has no Kafka position at all, so nothing is passed over.
  Reader other(sources({{"p0.txt", at(0, 10, 0) + at(1, 3, 1)},
                        {"half.txt", "Offset:10\t" + line(2) + "Partition:0\t" + line(3)}}),
               sink);
  CHECK(take(other) == std::vector<std::string>{"q0", "q1", "q2", "q3"});
  CHECK(other.stats().replayed == 0);
  CHECK(other.stats().out_of_order == 0);
}

TEST_CASE("a record rejected below the next offset is read again when given again, fixed") {
  const auto at = [](int offset, const std::string& record) {
    return "Partition:0\tOffset:" + std::to_string(offset) + "\t" + record;
  };
  // Offsets 4 to 8, the record at 6 malformed: rejected (with --max-rejects), the rest applied.
  std::string exported;
  for (int i = 4; i <= 8; ++i) exported += at(i, i == 6 ? "{\"version\":1}\n" : line(i));
  RejectSink sink(RejectPolicy{.max_rejects = 10, .reject_file = {}}, nullptr);
  Reader first(sources({{"export.txt", exported}}), sink);
  CHECK(take(first) == std::vector<std::string>{"q4", "q5", "q7", "q8"});
  const InputProgress p = first.progress();
  CHECK(p.kafka_next_offset.at({"", 0}) == 9);
  CHECK(p.kafka_rejected.at({"", 0}) == std::vector<std::int64_t>{6});
  // The record fixed and given again, with the export (applied: skipped by its mark) and an
  // overlap of offsets applied (skipped by offset): the fixed record alone is read, out of order
  // (after offsets 7 and 8, applied by the first run). The next progress no longer lists it.
  Reader second(sources({{"export.txt", exported}, {"fixed.txt", at(6, line(6)) + at(7, line(7))}}),
                sink);
  second.resume_from(p);
  CHECK(take(second) == std::vector<std::string>{"q6"});
  CHECK(second.stats().skipped == 6);
  CHECK(second.stats().skipped_by_offset == 1);
  CHECK(second.stats().out_of_order == 1);
  CHECK(second.progress().kafka_rejected.empty());
  CHECK(second.progress().kafka_next_offset.at({"", 0}) == 9);
  // Rejected again: still listed, and the next run reads it again too.
  Reader third(sources({{"again.txt", at(6, "{\"version\":1}\n")}}), sink);
  third.resume_from(p);
  CHECK(take(third).empty());
  CHECK(third.stats().rejected == 1);
  CHECK(third.progress().kafka_rejected.at({"", 0}) == std::vector<std::int64_t>{6});
  // A record rejected at or past the next offset is listed too: the next export takes the next
  // offset past it, and its fix, a run later, is still read.
  Reader last(sources({{"last.txt", at(4, line(4)) + at(5, "{\"version\":1}\n")}}), sink);
  take(last);
  CHECK(last.progress().kafka_next_offset.at({"", 0}) == 5);
  CHECK(last.progress().kafka_rejected.at({"", 0}) == std::vector<std::int64_t>{5});
  Reader next_export(sources({{"next.txt", at(6, line(6)) + at(7, line(7))}}), sink);
  next_export.resume_from(last.progress());
  CHECK(take(next_export) == std::vector<std::string>{"q6", "q7"});
  CHECK(next_export.progress().kafka_next_offset.at({"", 0}) == 8);
  Reader fix(sources({{"fix.txt", at(5, line(5))}}), sink);
  fix.resume_from(next_export.progress());
  CHECK(take(fix) == std::vector<std::string>{"q5"});
  CHECK(fix.stats().out_of_order == 1);  // after offsets 6 and 7: said, as any such event is
  CHECK(fix.progress().kafka_rejected.empty());
  // A partition whose records were all rejected: listed, with nothing applied there.
  Reader only_bad(sources({{"bad.txt", "Partition:3\tOffset:2\t{\"version\":1}\n"}}), sink);
  take(only_bad);
  CHECK(only_bad.progress().kafka_next_offset.at({"", 3}) == 0);
  CHECK(only_bad.progress().kafka_rejected.at({"", 3}) == std::vector<std::int64_t>{2});
}

TEST_CASE("at most kMaxRejectedOffsets rejected offsets are kept per partition, the highest") {
  const auto at = [](std::size_t offset, const std::string& record) {
    return "Partition:0\tOffset:" + std::to_string(offset) + "\t" + record;
  };
  const std::size_t n = kMaxRejectedOffsets + 2;
  std::string bad;
  for (std::size_t i = 0; i < n; ++i) bad += at(i, "{\"version\":1}\n");
  RejectSink sink(RejectPolicy{.max_rejects = 2 * n, .reject_file = {}}, nullptr);
  Reader first(sources({{"bad.txt", bad}}), sink);
  CHECK(take(first).empty());
  const InputProgress p = first.progress();
  const std::vector<std::int64_t>& kept = p.kafka_rejected.at({"", 0});
  CHECK(kept.size() == kMaxRejectedOffsets);
  CHECK(kept.front() == 2);
  CHECK(kept.back() == static_cast<std::int64_t>(n - 1));
  // A checkpoint edited by hand to list more: only the highest are read again once fixed; the
  // lowest are below the next offset like any record applied.
  InputProgress edited;
  edited.kafka_next_offset[{"", 0}] = static_cast<std::int64_t>(n);
  for (std::size_t i = 0; i < n; ++i) edited.kafka_rejected[{"", 0}].push_back(i);
  Reader fixed(sources({{"fixed.txt", at(0, line(0)) + at(2, line(2))}}), sink);
  fixed.resume_from(edited);
  CHECK(take(fixed) == std::vector<std::string>{"q2"});
  CHECK(fixed.stats().skipped_by_offset == 1);
  CHECK(fixed.progress().kafka_rejected.at({"", 0}).size() == kMaxRejectedOffsets - 1);
}

TEST_CASE("kcat: a replayed chunk of a split message read already is passed over, not held") {
  // kcat -J records of one partition: a split message's chunks at offsets 1-5, then an event; a
  // second export repeats chunks 2 and 3 (an overlap that does not hold the whole message).
  std::vector<std::string> chunks = split_message_chunks();
  for (std::string& chunk : chunks) chunk.pop_back();  // kcat's payloads have no line end
  const auto kcat = [](int offset, const std::string& record) {
    return "{\"topic\":\"ATLAS_ENTITIES\",\"partition\":0,\"offset\":" + std::to_string(offset) +
           ",\"tstype\":\"create\",\"ts\":1619751228672,\"key\":null,"
           "\"payload\":" +
           json_quote(record) + "}\n";
  };
  std::string first, second;
  for (int i = 0; i < 5; ++i) first += kcat(1 + i, chunks[i]);
  std::string event = line(7);
  event.pop_back();
  first += kcat(6, event);
  second = kcat(2, chunks[1]) + kcat(3, chunks[2]);
  RejectSink sink(RejectPolicy{}, nullptr);
  Reader reader(sources({{"first.jsonl", first}, {"second.jsonl", second}}), sink);
  CHECK(take(reader) == std::vector<std::string>{"sales.orders@cl1", "q7"});
  CHECK(reader.stats().replayed == 2);
  CHECK(reader.stats().first_replayed == "second.jsonl:1:0 (ATLAS_ENTITIES/0@2)");
  CHECK(reader.stats().rejected == 0);  // not held as the start of an incomplete message
  CHECK(reader.progress().kafka_next_offset.at({"ATLAS_ENTITIES", 0}) == 7);

  // A copy of a chunk still held (its message waiting for the rest) is a replay as well, whatever
  // its content: neither held twice nor rejected as a second chunk with other content.
  const std::string waiting = kcat(1, chunks[0]) + kcat(2, chunks[1]) + kcat(2, chunks[1]) +
                              kcat(2, chunks[3]) + kcat(3, chunks[2]) + kcat(4, chunks[3]) +
                              kcat(5, chunks[4]);
  Reader pending(sources({{"waiting.jsonl", waiting}}), sink);
  CHECK(take(pending) == std::vector<std::string>{"sales.orders@cl1"});
  CHECK(pending.stats().replayed == 2);
  CHECK(pending.stats().split_chunks == 4);
  CHECK(pending.stats().rejected == 0);
  CHECK(pending.stats().first_replayed.starts_with("waiting.jsonl:3:"));
}

TEST_CASE("checkpoint files round-trip and are replaced atomically") {
  char dir_template[] = "/tmp/atlas2kudu-ckpt-XXXXXX";
  REQUIRE(mkdtemp(dir_template) != nullptr);
  const std::string path = std::string(dir_template) + "/run.ckpt";
  CHECK(load_checkpoint(path).progress.sources.empty());  // first run: no file yet
  CHECK_FALSE(load_checkpoint(path).found);
  Checkpoint c;
  c.windows_applied = 3;
  c.events_applied = 150;
  c.progress.sources.push_back(SourceMark{"a \"quoted\".jsonl", "abc", 150, false});
  c.progress.sources.push_back(
      SourceMark{"b.jsonl", "def", 7, true, kFraming, "0123456789abcdef0123456789abcdef"});
  c.progress.kafka_next_offset[{"ATLAS_ENTITIES", 2}] = 1204;
  c.progress.kafka_rejected[{"ATLAS_ENTITIES", 2}] = {17, 1190};
  save_checkpoint(path, c);
  CHECK(slurp(path).find("\"next_offset\":1204,\"rejected\":[17,1190]}") != std::string::npos);
  const Checkpoint back = load_checkpoint(path);
  CHECK(back.found);
  CHECK(back.progress == c.progress);
  CHECK(back.windows_applied == 3);
  CHECK(back.events_applied == 150);
  // Nothing but the checkpoint itself is left in the directory (no temporary file).
  std::vector<std::string> left;
  for (const auto& entry : std::filesystem::directory_iterator(dir_template)) {
    left.push_back(entry.path().filename().string());
  }
  CHECK(left == std::vector<std::string>{"run.ckpt"});
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    std::fputs("{\"format\":\"something-else\"}", f);
    std::fclose(f);
  }
  CHECK_THROWS_WITH_AS(load_checkpoint(path), doctest::Contains("not an atlas2kudu checkpoint"),
                       std::runtime_error);
  // A file that names no checkpoint format is most often an input that became the value of
  // --checkpoint: the message says so before it suggests moving the file away.
  for (const std::string& text :
       {std::string("hello\n"), std::string("[1,2]\n"), line(1) + line(2)}) {
    CAPTURE(text);
    {
      std::FILE* f = std::fopen(path.c_str(), "w");
      std::fputs(text.c_str(), f);
      std::fclose(f);
    }
    try {
      (void)load_checkpoint(path);
      FAIL("expected a refusal");
    } catch (const Error& e) {
      CHECK(e.category() == ErrorCategory::kCheckpoint);
      CHECK(contains(e.what(),
                     ": not an atlas2kudu checkpoint (it names no atlas2kudu-checkpoint "
                     "format): if it is an input, the value of --checkpoint was left "
                     "out (nothing was applied; give the checkpoint's own path)"));
    }
  }
  // Not an object; an entry without a member the writer always writes (it would otherwise read
  // as "nothing applied" and be overwritten silently).
  struct Bad {
    std::string text, message;
  };
  for (const Bad& bad : std::vector<Bad>{
           {R"(["atlas2kudu-checkpoint/3"])", "not a JSON object, so not an atlas2kudu checkpoint"},
           {R"({"format":"atlas2kudu-checkpoint/2","sources":[{"name":"a"}]})",
            R"(malformed checkpoint at sources[0]: "identity" missing)"},
           {R"({"format":"atlas2kudu-checkpoint/2","sources":[{"name":"a","identity":"i",)"
            R"("next_record":1}]})",
            R"(malformed checkpoint at sources[0]: "complete" missing)"},
           {R"({"format":"atlas2kudu-checkpoint/2","kafka":[{"topic":"T","partition":0}]})",
            R"(malformed checkpoint at kafka[0]: "next_offset" missing)"},
           // A partition the reader could not have recorded (it keeps 32 bits: 2^32 + 1 would
           // read as partition 1).
           {R"({"format":"atlas2kudu-checkpoint/3","kafka":[{"topic":"T","partition":4294967297,)"
            R"("next_offset":5}]})",
            R"(malformed checkpoint at kafka[0].partition: partition 4294967297 (a 32-bit )"
            R"(integer))"},
           // A target edited by hand (a misspelled member, an empty endpoint): read as it is, it
           // would be a target not recorded, and the next run's taken without a check.
           {R"({"format":"atlas2kudu-checkpoint/3","target":{"endoipnt":"h:21050",)"
            R"("database":"atlas"}})",
            R"(malformed checkpoint at target: "endpoint" missing)"},
           {R"({"format":"atlas2kudu-checkpoint/3","target":{"endpoint":"","database":"atlas"}})",
            R"(malformed checkpoint at target.endpoint: empty)"},
           {R"({"format":"atlas2kudu-checkpoint/3","target":{"endpoint":"h:21050"}})",
            R"(malformed checkpoint at target: "database" missing)"},
           // Cut or edited down to its format: read as it is, it would say nothing was applied.
           {R"({"format":"atlas2kudu-checkpoint/3"})",
            R"(malformed checkpoint at the document: "windows_applied" missing)"},
           {R"({"format":"atlas2kudu-checkpoint/3","windows_applied":2,"events_applied":9,)"
            R"("kafka":[]})",
            R"(malformed checkpoint at the document: "sources" missing)"},
           // Two documents (one appended to the file): which is meant?
           {R"({"format":"atlas2kudu-checkpoint/3","windows_applied":2,"events_applied":9,)"
            R"("sources":[],"kafka":[]})"
            "\n"
            R"({"format":"atlas2kudu-checkpoint/3","windows_applied":3})",
            "malformed checkpoint: more after its JSON object"},
       }) {
    CAPTURE(bad.text);
    {
      std::FILE* f = std::fopen(path.c_str(), "w");
      std::fputs(bad.text.c_str(), f);
      std::fclose(f);
    }
    try {
      (void)load_checkpoint(path);
      FAIL("expected a refusal");
    } catch (const Error& e) {
      CHECK(e.category() == ErrorCategory::kCheckpoint);
      CHECK(contains(e.what(), ": " + bad.message + "; move it away to start over"));
    }
  }
  std::remove(path.c_str());
  ::rmdir(dir_template);
}

TEST_CASE("the checkpoint remembers every input applied: A, then B, then A again skips A") {
  char dir_template[] = "/tmp/atlas2kudu-ckpt-XXXXXX";
  REQUIRE(mkdtemp(dir_template) != nullptr);
  const std::string path = std::string(dir_template) + "/run.ckpt";
  std::string a, b;
  for (int i = 0; i < 3; ++i) a += line(i);
  for (int i = 3; i < 5; ++i) b += line(i);
  const auto run = [&](std::vector<std::pair<std::string, std::string>> files) {
    return checkpointed_run(path, files).read;
  };
  CHECK(run({{"a.jsonl", a}}).size() == 3);
  CHECK(run({{"b.jsonl", b}}).size() == 2);
  CHECK(run({{"a.jsonl", a}}).empty());                          // remembered from run 1
  CHECK(run({{"renamed-b.jsonl", b}, {"a.jsonl", a}}).empty());  // both, by content
  const Checkpoint c = load_checkpoint(path);
  CHECK(c.runs == 4);
  REQUIRE(c.progress.sources.size() == 2);
  CHECK(c.progress.sources[0].name == "renamed-b.jsonl");
  CHECK(c.last_run.at(remembered_key(c.progress.sources[0])) == 4);
  const std::string text = slurp(path);
  CHECK(text.find("\"format\":\"atlas2kudu-checkpoint/3\"") != std::string::npos);
  CHECK(text.find("\"framing\":4") != std::string::npos);
  CHECK(text.find("\"last_run\":4") != std::string::npos);
  std::filesystem::remove_all(dir_template);
}

TEST_CASE("FILE.window: kept while a window runs, tied to the checkpoint, removed once recorded") {
  char dir_template[] = "/tmp/atlas2kudu-ckpt-XXXXXX";
  REQUIRE(mkdtemp(dir_template) != nullptr);
  const std::string path = std::string(dir_template) + "/run.ckpt";
  const std::string window_file = path + ".window";
  std::string a;
  for (int i = 0; i < 3; ++i) a += line(i);
  CompileOptions o;
  o.prior = PriorSource::kImpala;
  // What a compiler knew of the entities of the events it read, before folding them.
  const auto knowledge_of = [&](Compiler& compiler, const std::vector<Event>& events) {
    std::vector<PriorEntity> found;
    for (const Guid& g : compiler.unknown_entities(events)) {
      found.emplace_back().guid = g;
      found.back().exists = true;
      found.back().type_name = "DataSet";
    }
    compiler.learn(found);
    return compiler.knowledge_snapshot(events);
  };
  const auto read_all = [](Reader& reader) {
    std::vector<Event> events;
    for (Event e; reader.next(e);) events.push_back(std::move(e));
    return events;
  };

  // Run 1 stops inside its first window: FILE.window stays, owner-only.
  std::string first_knowledge;
  {
    RejectSink sink(RejectPolicy{}, nullptr);
    Reader reader(sources({{"a.jsonl", a}}), sink);
    CheckpointFile checkpoint(path, reader);
    CHECK(checkpoint.window_knowledge().empty());
    Compiler compiler(o);
    const std::vector<Event> window = read_all(reader);
    REQUIRE(window.size() == 3);
    first_knowledge = knowledge_of(compiler, window);
    REQUIRE_FALSE(first_knowledge.empty());
    checkpoint.window_starting(first_knowledge, window, reader);
    struct stat st {};
    REQUIRE(stat(window_file.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    // Written straight from the compiler (as apply does), the file is the same, and the run keeps
    // no copy of the snapshot: FILE.window is the only one.
    const std::string from_text = slurp(window_file);
    checkpoint.window_starting(KnowledgeSnapshot(compiler, window), window, reader);
    CHECK(slurp(window_file) == from_text);
    CHECK(checkpoint.window_knowledge().empty());
    CHECK(KnowledgeSnapshot(compiler, window).size() == first_knowledge.size());
    CHECK(KnowledgeSnapshot(compiler, window).str() == first_knowledge);
  }
  // Run 2 finds it (the checkpoint is as run 1 left it), hands it to its compiler, keeps it while
  // its own window runs, and removes it once the window is recorded.
  {
    RejectSink sink(RejectPolicy{}, nullptr);
    Reader reader(sources({{"a.jsonl", a}}), sink);
    CheckpointFile checkpoint(path, reader);
    CHECK(checkpoint.window_knowledge() == first_knowledge);
    // Its first window goes on until it holds the 3 events of run 1's window, the last from
    // its last record.
    CHECK(checkpoint.stopped_window_events() == 3);
    Compiler compiler(o);
    CHECK(checkpoint.assume_window_knowledge(compiler));
    std::vector<Event> events(2);
    REQUIRE(reader.next(events[0]));
    REQUIRE(reader.next(events[1]));
    CHECK_FALSE(checkpoint.first_window_may_close(reader, events));
    for (Event& e : read_all(reader)) events.push_back(std::move(e));
    CHECK(checkpoint.first_window_may_close(reader, events));
    CHECK(compiler.unknown_entities(events).empty());
    CHECK(compiler.knowledge_stats().window_file_reads == 0);  // asked whether, not read
    checkpoint.window_starting(compiler.knowledge_snapshot(events), events, reader);
    CHECK(checkpoint.window_knowledge() == first_knowledge);
    // The snapshot read the knowledge of the events' one entity from FILE.window (--stats).
    CHECK(compiler.knowledge_stats().window_file_reads == 1);
    CHECK(compiler.knowledge_stats().spill_reads == 0);
    CHECK(std::filesystem::exists(window_file));
    checkpoint.window_applied(WindowInfo{1, 1, events.size(), "", ""}, reader);
    CHECK_FALSE(std::filesystem::exists(window_file));
    CHECK(checkpoint.window_knowledge().empty());
    // A window stopped in now is tied to the checkpoint as it is now.
    checkpoint.window_starting(first_knowledge, events, reader);
  }
  // A file tied to another state of the checkpoint (it was replaced since) is ignored and removed.
  {
    const std::string kept = slurp(window_file);
    {
      RejectSink sink(RejectPolicy{}, nullptr);
      Reader reader(sources({{"b.jsonl", line(7)}}), sink);
      CheckpointFile checkpoint(path, reader);
      CHECK(checkpoint.window_knowledge() == first_knowledge);
      take(reader);
      checkpoint.window_applied(WindowInfo{1, 1, 1, "", ""}, reader);
    }
    std::ofstream(window_file, std::ios::binary) << kept;  // as if the removal had not happened
    RejectSink sink(RejectPolicy{}, nullptr);
    Reader reader(sources({{"b.jsonl", line(7)}}), sink);
    CheckpointFile checkpoint(path, reader);
    CHECK(checkpoint.window_knowledge().empty());
    CHECK_FALSE(std::filesystem::exists(window_file));
  }
  // Bytes that are not what atlas2kudu writes there: a checkpoint error naming FILE.window,
  // whether the file's layout is cut short or the knowledge in it is not a snapshot.
  {
    {
      RejectSink sink(RejectPolicy{}, nullptr);
      Reader reader(sources({{"b.jsonl", line(7)}}), sink);
      CheckpointFile checkpoint(path, reader);
      checkpoint.window_starting(first_knowledge, {}, reader);
    }
    const std::string text = slurp(window_file);
    const auto refused = [&](const std::function<void()>& run) {
      try {
        run();
        FAIL("accepted");
      } catch (const Error& e) {
        CHECK(e.category() == ErrorCategory::kCheckpoint);
        CHECK(std::string(e.what()).find(window_file) != std::string::npos);
      }
    };
    std::ofstream(window_file, std::ios::binary | std::ios::trunc)
        << text.substr(0, text.size() - 3);
    refused([&] {
      RejectSink sink(RejectPolicy{}, nullptr);
      Reader reader(sources({{"b.jsonl", line(7)}}), sink);
      CheckpointFile checkpoint(path, reader);
    });
    // An events line that is no number.
    std::size_t at = 0;
    for (int i = 0; i < 3; ++i) at = text.find('\n', at) + 1;
    std::ofstream(window_file, std::ios::binary | std::ios::trunc)
        << text.substr(0, at) << "x1\n"
        << text.substr(text.find('\n', at) + 1);
    refused([&] {
      RejectSink sink(RejectPolicy{}, nullptr);
      Reader reader(sources({{"b.jsonl", line(7)}}), sink);
      CheckpointFile checkpoint(path, reader);
    });
    // An end line that names no record.
    {
      std::string bad_end = text;
      const std::size_t end_line = bad_end.find('\n', at) + 1;
      bad_end.insert(end_line, "nocolons ");
      std::ofstream(window_file, std::ios::binary | std::ios::trunc) << bad_end;
      refused([&] {
        RejectSink sink(RejectPolicy{}, nullptr);
        Reader reader(sources({{"b.jsonl", line(7)}}), sink);
        CheckpointFile checkpoint(path, reader);
      });
    }
    // A file of version 1 (no events and end lines) is read: its window has no end to reach.
    {
      std::string v1 = text;
      v1.replace(v1.find("knowledge/2"), 11, "knowledge/1");
      const std::size_t end_line = v1.find('\n', v1.find('\n', at) + 1);
      v1.erase(at, end_line + 1 - at);
      std::ofstream(window_file, std::ios::binary | std::ios::trunc) << v1;
      RejectSink sink(RejectPolicy{}, nullptr);
      Reader reader(sources({{"b.jsonl", line(7)}}), sink);
      CheckpointFile checkpoint(path, reader);
      CHECK(checkpoint.window_knowledge() == first_knowledge);
      CHECK(checkpoint.stopped_window_events() == 0);
      CHECK(checkpoint.first_window_may_close(reader, {}));
    }
    // magic, target, digest, events and end lines kept; a section of three bytes that are no
    // snapshot.
    for (int i = 0; i < 2; ++i) at = text.find('\n', at) + 1;
    std::ofstream(window_file, std::ios::binary | std::ios::trunc)
        << text.substr(0, at) << "3\nxyz";
    refused([&] {
      RejectSink sink(RejectPolicy{}, nullptr);
      Reader reader(sources({{"b.jsonl", line(7)}}), sink);
      CheckpointFile checkpoint(path, reader);
      Compiler compiler(o);
      checkpoint.assume_window_knowledge(compiler);
    });
  }
  std::filesystem::remove_all(dir_template);
}

TEST_CASE("FILE.window belongs to its target, and keeps what a shorter rerun has not folded yet") {
  char dir_template[] = "/tmp/atlas2kudu-ckpt-XXXXXX";
  REQUIRE(mkdtemp(dir_template) != nullptr);
  const std::string path = std::string(dir_template) + "/run.ckpt";
  const std::string window_file = path + ".window";
  std::string a;
  for (int i = 0; i < 4; ++i) a += line(i);
  CompileOptions o;
  o.prior = PriorSource::kImpala;
  // Events of entities n...: what a compiler that looked them up (rows of DataSets) knows.
  const auto entities = [](std::initializer_list<int> ns) {
    std::vector<Event> out;
    for (const int n : ns) {
      Event& e = out.emplace_back();
      e.op = Operation::kEntityUpdate;
      e.guid = *Guid::parse(fmt::format("0000000{}-0000-4000-8000-00000000000{}", n, n));
    }
    return out;
  };
  const auto knowledge_of = [&](std::initializer_list<int> ns) {
    Compiler compiler(o);
    const std::vector<Event> events = entities(ns);
    std::vector<PriorEntity> found;
    for (const Event& e : events) {
      found.emplace_back().guid = e.guid;
      found.back().exists = true;
      found.back().type_name = "DataSet";
    }
    compiler.learn(found);
    return compiler.knowledge_snapshot(events);
  };
  const CheckpointTarget cluster_a{"a.example.com:21050", "atlas"};
  const CheckpointTarget cluster_b{"b.example.com:21050", "atlas"};
  const auto open = [&](Reader& reader, const CheckpointTarget& target) {
    return std::make_unique<CheckpointFile>(path, reader, Reader::ResumeNotice{}, target);
  };
  const std::string first = knowledge_of({1, 2, 3});
  // A run against cluster A stops in its first window: FILE.window holds `first`.
  const auto stop_in_first_window = [&] {
    RejectSink sink(RejectPolicy{}, nullptr);
    Reader reader(sources({{"a.jsonl", a}}), sink);
    open(reader, cluster_a)->window_starting(first, entities({1, 2, 3}), reader);
  };
  // A first run against cluster A stops in its first window: no checkpoint file, FILE.window.
  stop_in_first_window();
  REQUIRE_FALSE(std::filesystem::exists(path));
  // A run against cluster B with the same path knows nothing of it, and removes it.
  {
    RejectSink sink(RejectPolicy{}, nullptr);
    Reader reader(sources({{"a.jsonl", a}}), sink);
    const auto checkpoint = open(reader, cluster_b);
    CHECK(checkpoint->window_knowledge().empty());
    CHECK(checkpoint->discarded_window_knowledge() == "it was written for another target");
    CHECK_FALSE(std::filesystem::exists(window_file));
  }
  stop_in_first_window();
  // A --prior none run does not use it, so it removes it (it would be re-tied to each checkpoint
  // that run records, and a later run would fold stale knowledge).
  {
    RejectSink sink(RejectPolicy{}, nullptr);
    Reader reader(sources({{"a.jsonl", a}}), sink);
    const auto checkpoint = open(reader, cluster_a);
    CHECK(checkpoint->window_knowledge() == first);
    checkpoint->forget_window_knowledge();
    CHECK(checkpoint->window_knowledge().empty());
    CHECK_FALSE(checkpoint->discarded_window_knowledge().empty());
    CHECK_FALSE(std::filesystem::exists(window_file));
  }
  stop_in_first_window();
  // The rerun against A cuts a shorter window (entity 1 only), records it, and stops in the next:
  // what it assumed of entities 2 and 3 stays in FILE.window, tied to the new checkpoint.
  {
    RejectSink sink(RejectPolicy{}, nullptr);
    Reader reader(sources({{"a.jsonl", a}}), sink);
    auto checkpoint = open(reader, cluster_a);
    CHECK(checkpoint->window_knowledge() == first);
    CHECK(checkpoint->stopped_window_events() == 3);
    take(reader, 2);
    checkpoint->window_starting(knowledge_of({1}), entities({1}), reader);
    checkpoint->window_applied(WindowInfo{1, 1, 2, "", ""}, reader);
    CHECK(checkpoint->window_knowledge() == knowledge_of({2, 3}));
    CHECK(std::filesystem::exists(window_file));
    checkpoint->window_starting(knowledge_of({2, 4}), entities({2, 4}), reader);
    CHECK(checkpoint->window_knowledge() ==
          merge_knowledge_snapshots(knowledge_of({2, 3}), knowledge_of({2, 4})));
  }
  {
    RejectSink sink(RejectPolicy{}, nullptr);
    Reader reader(sources({{"a.jsonl", a}}), sink);
    auto checkpoint = open(reader, cluster_a);
    CHECK(checkpoint->window_knowledge() == knowledge_of({2, 3, 4}));
    take(reader);
    checkpoint->window_starting(knowledge_of({2, 3, 4}), entities({2, 3, 4}), reader);
    checkpoint->window_applied(WindowInfo{1, 3, 4, "", ""}, reader);
    // Everything assumed is folded: nothing left to keep.
    CHECK(checkpoint->window_knowledge().empty());
    CHECK_FALSE(std::filesystem::exists(window_file));
  }
  std::filesystem::remove_all(dir_template);
}

TEST_CASE("a checkpoint save that fails leaves state() and resume_point() as the file holds") {
  char dir_template[] = "/tmp/atlas2kudu-ckpt-XXXXXX";
  REQUIRE(mkdtemp(dir_template) != nullptr);
  const std::string path = std::string(dir_template) + "/run.ckpt";
  std::string a;
  for (int i = 0; i < 6; ++i) a += line(i);
  RejectSink sink(RejectPolicy{}, nullptr);
  Reader reader(sources({{"a.jsonl", a}}), sink);
  CheckpointFile checkpoint(path, reader);
  CHECK(take(reader, 2).size() == 2);
  checkpoint.window_applied(WindowInfo{1, 1, 2, "", ""}, reader);
  CHECK(checkpoint.resume_point() == "a.jsonl after its first 2 records");
  // The disk goes away under the run (as a full disk fails the write): the second save fails,
  // and what the run reports stays what the file last held.
  std::filesystem::remove_all(dir_template);
  CHECK(take(reader, 2).size() == 2);
  CHECK_THROWS_AS(checkpoint.window_applied(WindowInfo{2, 3, 4, "", ""}, reader), Error);
  CHECK(checkpoint.written());
  CHECK(checkpoint.windows_recorded() == 1);
  CHECK(checkpoint.state().windows_applied == 1);
  CHECK(checkpoint.state().progress.sources.at(0).next_record == 2);
  CHECK(checkpoint.resume_point() == "a.jsonl after its first 2 records");
}

TEST_CASE("a checkpoint belongs to its target: another endpoint or database is refused") {
  char dir_template[] = "/tmp/atlas2kudu-ckpt-XXXXXX";
  REQUIRE(mkdtemp(dir_template) != nullptr);
  const std::string path = std::string(dir_template) + "/run.ckpt";
  const std::string a = line(0) + line(1);
  const CheckpointTarget cluster_a{"impala-a:21050", "atlas"};
  const auto run = [&](const CheckpointTarget& target) {
    RejectSink sink(RejectPolicy{}, nullptr);
    Reader reader(sources({{"a.jsonl", a}}), sink);
    CheckpointFile checkpoint(path, reader, {}, target);
    const std::vector<std::string> read = take(reader);
    if (!read.empty()) checkpoint.window_applied(WindowInfo{1, 1, read.size(), "", ""}, reader);
    checkpoint.run_completed(reader);
    return read.size();
  };
  CHECK(run(cluster_a) == 2);
  CHECK(
      contains(slurp(path), "\"target\":{\"endpoint\":\"impala-a:21050\",\"database\":\"atlas\"}"));
  CHECK(run(cluster_a) == 0);                                    // the same target: applied already
  CHECK(run(CheckpointTarget{"impala-a:21050", "ATLAS"}) == 0);  // Impala ignores the case
  CHECK(run(CheckpointTarget{"Impala-A:21050", "atlas"}) == 0);  // and so does DNS
  // A new cluster, or another database: its tables never got these inputs.
  for (const CheckpointTarget& other : {CheckpointTarget{"impala-b:21050", "atlas"},
                                        CheckpointTarget{"impala-a:21050", "atlas2"}}) {
    try {
      run(other);
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.category() == ErrorCategory::kCheckpoint);
      CHECK(contains(e.what(), path +
                                   ": records what was applied to database atlas on "
                                   "impala-a:21050, and this run writes to database " +
                                   other.database + " on " + other.endpoint));
      CHECK(contains(e.what(), "Give each target its own --checkpoint"));
      // Another name may be the same cluster; another database is never the same tables.
      CHECK(contains(e.what(), "delete the file's \"target\" member") ==
            (other.database == "atlas"));
    }
  }
  // A file written before targets were recorded takes the first target it meets.
  std::filesystem::remove(path);
  save_checkpoint(path, Checkpoint{});
  CHECK(run(CheckpointTarget{"impala-b:21050", "atlas"}) == 2);
  CHECK(load_checkpoint(path).target == CheckpointTarget{"impala-b:21050", "atlas"});
  std::filesystem::remove_all(dir_template);
}

TEST_CASE("two exports that start alike are two inputs: A, then B, then A or B again skip") {
  char dir_template[] = "/tmp/atlas2kudu-ckpt-XXXXXX";
  REQUIRE(mkdtemp(dir_template) != nullptr);
  const std::string path = std::string(dir_template) + "/run.ckpt";
  // The same first 500 records (over 64 KiB: one identity), then others.
  std::string a, b;
  for (int i = 0; i < 600; ++i) a += line(i);
  for (int i = 0; i < 500; ++i) b += line(i);
  for (int i = 1000; i < 1050; ++i) b += line(i);
  const auto run = [&](std::vector<std::pair<std::string, std::string>> files) {
    return checkpointed_run(path, files);
  };
  CHECK(run({{"a.jsonl", a}}).read.size() == 600);
  const CheckpointedRun second = run({{"b.jsonl", b}});  // taken for a at first, then read whole
  CHECK(second.read.size() == 550);
  CHECK(second.stats.resume_mismatches == 1);
  CHECK(load_checkpoint(path).progress.sources.size() == 2);  // a is still remembered
  const CheckpointedRun third = run({{"a.jsonl", a}});        // b's entry tried first, then a's
  CHECK(third.read.empty());
  CHECK(third.stats.resume_mismatches == 0);
  CHECK(run({{"b.jsonl", b}}).read.empty());
  CHECK(run({{"b2.jsonl", b}, {"a2.jsonl", a}}).read.empty());  // renamed, both
  CHECK(load_checkpoint(path).progress.sources.size() == 2);
  // A prefix of both (p), read last: a copy of a is a, the longest entry that fits, not p grown.
  // (p itself has fewer records than a's and b's entries: applied again, said.)
  std::string p;
  for (int i = 0; i < 500; ++i) p += line(i);
  CHECK(run({{"p.jsonl", p}}).stats.resume_mismatches == 1);
  CHECK(run({{"copy-of-a.jsonl", a}}).read.empty());
  // a grown and a copy of a in one run: the entry the first fits fits the second too.
  const CheckpointedRun both = run({{"a-grown.jsonl", a + line(600)}, {"again.jsonl", a}});
  CHECK(both.read == std::vector<std::string>{"q600"});
  CHECK(both.stats.resume_mismatches == 0);
  std::filesystem::remove_all(dir_template);
}

TEST_CASE("remembered inputs are bounded: those read longest ago are forgotten first") {
  Checkpoint previous;
  previous.runs = 7;
  for (std::size_t i = 0; i < kMaxRememberedInputs; ++i) {
    const std::string id = "id" + std::to_string(i);
    previous.progress.sources.push_back(SourceMark{"f" + std::to_string(i), id, 1, true});
    previous.last_run[remembered_key(previous.progress.sources.back())] = i % 7 + 1;  // runs 1..7
  }
  InputProgress current;
  current.sources.push_back(SourceMark{"new.jsonl", "new", 4, true});
  current.sources.push_back(SourceMark{"-", "", 9, true});  // stdin: no identity, not remembered
  Checkpoint out;
  remember_inputs(previous, current, 8, out);
  REQUIRE(out.progress.sources.size() == kMaxRememberedInputs);
  CHECK(out.progress.sources[0].identity == "new");
  CHECK(out.last_run.at(remembered_key(current.sources[0])) == 8);
  // Two marks of this run (stdin's takes a place too), so two old inputs had to go: two of those
  // last read by run 1, the oldest.
  std::size_t run1 = 0;
  for (const auto& [id, last] : out.last_run) run1 += last == 1;
  std::size_t run1_before = 0;
  for (const auto& [id, last] : previous.last_run) run1_before += last == 1;
  CHECK(run1 == run1_before - 2);
  CHECK(out.last_run.size() == kMaxRememberedInputs - 1);  // stdin's mark has no identity
  std::uint64_t oldest = 8;
  for (const auto& [id, last] : out.last_run) oldest = std::min(oldest, last);
  CHECK(oldest == 1);
}

TEST_CASE("a version 1 checkpoint is read and rewritten in the current format") {
  char dir_template[] = "/tmp/atlas2kudu-ckpt-XXXXXX";
  REQUIRE(mkdtemp(dir_template) != nullptr);
  const std::string path = std::string(dir_template) + "/old.ckpt";
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    std::fputs(
        "{\"format\":\"atlas2kudu-checkpoint/1\",\"windows_applied\":2,\"events_applied\":9,"
        "\"sources\":[{\"name\":\"a.jsonl\",\"identity\":\"abc\",\"next_record\":9,"
        "\"complete\":true}],\"kafka\":[{\"topic\":\"T\",\"partition\":1,\"next_offset\":7}]}\n",
        f);
    std::fclose(f);
  }
  const Checkpoint v1 = load_checkpoint(path);
  CHECK(v1.windows_applied == 2);
  CHECK(v1.runs == 0);
  REQUIRE(v1.progress.sources.size() == 1);
  CHECK(v1.progress.sources[0].next_record == 9);
  CHECK(v1.progress.sources[0].framing == 1);  // counted by the release that wrote it
  CHECK(v1.progress.kafka_next_offset.at({"T", 1}) == 7);
  {
    RejectSink sink(RejectPolicy{}, nullptr);
    Reader reader(sources({{"b.jsonl", line(1)}}), sink);
    CheckpointFile checkpoint(path, reader);
    take(reader);
    checkpoint.window_applied(WindowInfo{1, 1, 1, "", ""}, reader);
  }
  const Checkpoint v2 = load_checkpoint(path);
  CHECK(v2.runs == 1);
  CHECK(v2.windows_applied == 3);
  REQUIRE(v2.progress.sources.size() == 2);
  CHECK(v2.progress.sources[1].identity == "abc");  // remembered from the version 1 file
  CHECK(v2.progress.sources[1].framing == 1);       // and still counted as it was
  CHECK(v2.progress.sources[0].framing == kFraming);
  CHECK(slurp(path).find("\"format\":\"atlas2kudu-checkpoint/3\"") != std::string::npos);
  CHECK(v2.progress.kafka_next_offset.at({"T", 1}) == 7);
  std::filesystem::remove_all(dir_template);
}

namespace {

// What `name` holding `text` reads as when resumed from a resume point after `next_record` records,
// counted by framing `framing`: its events, or the checkpoint error's message ("error: ...").
std::vector<std::string> resumed_by_framing(const std::string& name, const std::string& text,
                                            std::uint64_t next_record, std::uint32_t framing) {
  RejectSink sink(RejectPolicy{.max_rejects = 10, .reject_file = {}}, nullptr);
  InputProgress old;
  {
    Reader first(sources({{name, text}}), sink);
    take(first);
    old = first.progress();
  }
  REQUIRE(old.sources.size() == 1);
  old.sources[0].next_record = next_record;
  old.sources[0].complete = false;
  old.sources[0].framing = framing;
  Reader resumed(sources({{name, text}}), sink);
  resumed.resume_from(old);
  try {
    return take(resumed);
  } catch (const Error& e) {
    CHECK(e.category() == ErrorCategory::kCheckpoint);
    return {std::string("error: ") + e.what()};
  }
}

}  // namespace

TEST_CASE("a resume point counted by an earlier framing is refused where the counts differ") {
  // Framing 1 counted a Kafka tool's log line as records; framing 2 skips it. A resume point
  // after such a line, counted the old way, would skip a record never applied.
  const std::string log = "[2024-01-02 03:04:05,006] WARN lost the leader (c)\n";
  // As framing 1 counted q0 and q1 (the log line: 1 record).
  std::vector<std::string> got =
      resumed_by_framing("a.jsonl", line(0) + log + line(1) + line(2) + line(3), 3, 1);
  REQUIRE(got.size() == 1);
  CHECK(got[0].starts_with(
      "error: a.jsonl: the checkpoint's resume point, after 3 records, was counted by an earlier "
      "atlas2kudu"));
  // Where nothing before the resume point is counted otherwise, it resumes as before, also past
  // such a line after it.
  CHECK(resumed_by_framing("b.jsonl", line(0) + line(1) + log + line(2) + line(3), 2, 1) ==
        std::vector<std::string>{"q2", "q3"});

  // Framing 2 read a console line of prefixes alone on into the next line (one record for both);
  // framing 3 counts it as a record of its own. A log line, counted alike by 2 and 3, is no
  // reason to refuse a resume point of framing 2.
  const std::string empty = "Partition:0\tOffset:5\t\n";
  // As framing 2 counted q0 and the empty line with q1.
  got = resumed_by_framing("c.jsonl", line(0) + log + empty + line(1) + line(2) + line(3), 2, 2);
  REQUIRE(got.size() == 1);
  CHECK(contains(got[0],
                 "after 2 records, was counted by an earlier atlas2kudu, and this input has lines "
                 "it counted otherwise before that point (a console line of prefixes alone, or a "
                 "console key that is JSON)"));
  // The empty line after the resume point: rejected.
  CHECK(resumed_by_framing("d.jsonl", line(0) + log + line(1) + line(2) + empty + line(3), 2, 2) ==
        std::vector<std::string>{"q2", "q3"});

  // Framing 3 counted a console key that is JSON as a record of its own; framing 4 reads it as
  // one of the message's prefixes (after a timestamp alone: no Kafka position, which the earlier
  // run would have marked as applied).
  const std::string key = "CreateTime:1700000000000\t{\"id\":1}\t";
  // As framing 3 counted q0, the key and q1.
  got = resumed_by_framing("e.jsonl", line(0) + key + line(1) + line(2) + line(3), 3, 3);
  REQUIRE(got.size() == 1);
  CHECK(contains(got[0], "before that point (a console key that is JSON)"));
  CHECK(resumed_by_framing("f.jsonl", line(0) + line(1) + key + line(2) + line(3), 2, 3) ==
        std::vector<std::string>{"q2", "q3"});
}

TEST_CASE("one run at a time: a second lock on the checkpoint fails at once, naming the owner") {
  char dir_template[] = "/tmp/atlas2kudu-ckpt-XXXXXX";
  REQUIRE(mkdtemp(dir_template) != nullptr);
  const std::string path = std::string(dir_template) + "/run.ckpt";
  {
    CheckpointLock first(path);
    try {
      CheckpointLock second(path);
      FAIL("expected Error(kLocked)");
    } catch (const Error& e) {
      CHECK(e.category() == ErrorCategory::kLocked);
      CHECK(std::string(e.what()).find("pid " + std::to_string(::getpid())) != std::string::npos);
      CHECK(std::string(e.what()).find(path + ".lock") != std::string::npos);
    }
  }
  {
    // Held by another process than the run the file names (flock(1) around a cron job): the
    // pid an ended run left there is not named as the holder.
    const int fd = ::open((path + ".lock").c_str(), O_RDWR);
    REQUIRE(fd >= 0);
    REQUIRE(::flock(fd, LOCK_EX) == 0);
    REQUIRE(::ftruncate(fd, 0) == 0);
    REQUIRE(::pwrite(fd, "2147483647\n", 11, 0) == 11);  // above any pid_max: not running
    try {
      CheckpointLock second(path);
      FAIL("expected Error(kLocked)");
    } catch (const Error& e) {
      CHECK(e.category() == ErrorCategory::kLocked);
      CHECK(std::string(e.what()) ==
            path + ": another process holds its lock " + path +
                ".lock (not the atlas2kudu run whose pid the file names, 2147483647, which has "
                "ended: flock(1) on the lock file?); nothing was done. Run again once it has let "
                "go.");
    }
    ::close(fd);
  }
  CheckpointLock again(path);  // released with the first
  // The lock file is never followed through a symbolic link.
  const std::string other = std::string(dir_template) + "/other.ckpt";
  std::filesystem::create_symlink("/etc/passwd", other + ".lock");
  CHECK_THROWS_AS(CheckpointLock{other}, Error);
  std::filesystem::remove_all(dir_template);
}

TEST_SUITE_END();
