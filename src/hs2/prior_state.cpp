#include "hs2/prior_state.h"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <initializer_list>
#include <map>
#include <stdexcept>

#include "atlas2kudu/error.h"
#include "atlas2kudu/reader.h"
#include "compile/impala_sql.h"
#include "compile/schema.h"
#include "util/stop.h"

namespace atlas2kudu {

namespace {

// The guid column as the SELECT list names it: hex text under either encoding.
void append_guid_column(std::string& out, KeyEncoding encoding) {
  if (encoding == KeyEncoding::kBinary) {
    out += "lower(hex(";
    append_identifier(out, "guid");
    out += "))";
  } else {
    append_identifier(out, "guid");
  }
}

// The columns read back, in the order the SELECT lists them after the guid (schema.h).
constexpr std::array<std::size_t, 3> kFlatColumns = {
    schema::kFlatTypeName, schema::kFlatQualifiedName, schema::kFlatPropsJson};
constexpr std::array<std::size_t, 1> kTagColumns = {schema::kTagTagName};

// SELECT <guid>, <columns> FROM <table> WHERE `guid` IN (
std::string select_prefix(const schema::Table& table, std::span<const std::size_t> columns,
                          const CompileOptions& options) {
  std::string out = "SELECT ";
  append_guid_column(out, options.key_encoding);
  for (std::size_t c : columns) {
    out += ", ";
    append_identifier(out, table.column(c));
  }
  out += " FROM ";
  out += qualified_table(options.database, table.name);
  out += " WHERE ";
  append_identifier(out, "guid");
  out += " IN (";
  return out;
}

std::string entity_flat_prefix(const CompileOptions& options) {
  return select_prefix(schema::kEntityFlat, kFlatColumns, options);
}

std::string classifications_prefix(const CompileOptions& options) {
  return select_prefix(schema::kEntityClassifications, kTagColumns, options);
}

std::string with_keys(std::string sql, std::span<const Guid> guids, KeyEncoding encoding) {
  for (std::size_t i = 0; i < guids.size(); ++i) {
    if (i > 0) sql += ", ";
    append_key(sql, guids[i].bytes, encoding);
  }
  sql += ")";
  return sql;
}

// The guid of a result row: hex text of a key we asked for.
Guid row_guid(const std::optional<std::string>& cell, std::string_view table) {
  std::optional<Guid> g;
  if (cell && cell->size() == 32) g = Guid::parse(*cell);
  if (!g) {
    throw Hs2Error(Hs2ErrorKind::kInternal,
                   fmt::format("prior-state lookup: {} returned a guid that is not 32 hex "
                               "characters: {}",
                               table, cell ? "'" + cell->substr(0, 64) + "'" : "NULL"));
  }
  return *g;
}

void check_shape(const Hs2QueryResult& r, std::size_t columns, std::string_view table) {
  bool ok = r.columns.size() == columns;
  for (const auto& row : r.rows) ok = ok && row.size() == columns;
  if (!ok) {
    throw Hs2Error(Hs2ErrorKind::kInternal,
                   fmt::format("prior-state lookup: {} returned {} columns, expected {}", table,
                               r.columns.size(), columns));
  }
}

}  // namespace

std::size_t lookup_batch_keys(const CompileOptions& options, std::size_t last_bytes_per_key) {
  const auto at_least_16 = [](std::size_t keys) { return std::max<std::size_t>(keys, 16); };
  const std::size_t cells = std::max(options.props_max_bytes, kDefaultMaxCellBytes);
  std::size_t keys = std::min(options.batch_rows, at_least_16(options.window_budget / 2 / cells));
  if (last_bytes_per_key > 0) {
    keys = std::min(keys, at_least_16(options.window_budget / 8 / last_bytes_per_key));
  }
  return keys;
}

namespace {

std::size_t answer_bytes(const PriorEntity& p) {
  // Each string's bytes and its own footprint (the allocator's block, or its inline buffer).
  const auto text = [](const std::string& s) { return s.size() + sizeof(std::string); };
  const auto cell = [&](const std::optional<std::string>& s) { return s ? text(*s) : 0; };
  std::size_t n = sizeof p + cell(p.type_name) + cell(p.qualified_name) + cell(p.props_json);
  for (const std::string& tag : p.tags) n += text(tag);
  return n;
}

}  // namespace

Hs2PriorState::Hs2PriorState(const Hs2Settings& hs2, SessionFactory sessions,
                             const CompileOptions& options)
    : endpoint_(hs2.endpoint()),
      make_session_(std::move(sessions)),
      options_(options),
      retry_(hs2.options().max_retries, std::chrono::milliseconds(hs2.options().retry_backoff_ms)) {
  check_identifier(options_.database);
  if (options_.batch_rows == 0) throw Error(ErrorCategory::kUsage, "batch_rows must be at least 1");
}

Hs2PriorState::~Hs2PriorState() {
  if (session_) session_->close();
}

std::string Hs2PriorState::describe() const {
  return fmt::format("impala (batched primary-key lookups over HS2 at {}:{})", endpoint_.host,
                     endpoint_.port);
}

Hs2PriorStats Hs2PriorState::stats() const {
  Hs2PriorStats stats = stats_;
  const RetryCounters counters = retry_.counters();
  stats.retries = counters.retries;
  stats.reconnects = counters.reconnects;
  return stats;
}

std::string Hs2PriorState::entity_flat_query(std::span<const Guid> guids,
                                             const CompileOptions& options) {
  return with_keys(entity_flat_prefix(options), guids, options.key_encoding);
}

std::string Hs2PriorState::classifications_query(std::span<const Guid> guids,
                                                 const CompileOptions& options) {
  return with_keys(classifications_prefix(options), guids, options.key_encoding);
}

Hs2QueryResult Hs2PriorState::run(const std::string& sql, std::string_view table,
                                  std::string_view where) {
  if (!session_) {
    // The first connect fails as apply's does, after its own --connect_max_tries (exit 4, or 5
    // for authentication and TLS): re-running the lookup is for a server lost mid-run, and a
    // `compile --prior impala` with nothing listening took 40 s of retries to say so.
    std::unique_ptr<SqlSession> session = make_session_();
    session->connect();
    session_ = std::move(session);
  }
  const std::string what = fmt::format("{}, {}", table, where);
  const ObservedStatement observed(observer_, {0, "lookup", ++lookup_queries_, 0, table});
  Hs2QueryResult r;
  try {
    r = retry_.run(
        *session_, [&](SqlSession& s) { return s.query(sql); },
        [&](const RetryFailure& f) {
          throw Hs2Error(f.error.kind(),
                         f.exhausted
                             ? fmt::format("prior-state lookup ({}): {}", what, f.giving_up())
                             : fmt::format("prior-state lookup ({}): {}", what, f.error.what()));
        },
        observed.retries());
  } catch (StopError& e) {
    e.add_context(fmt::format("prior-state lookup ({}): ", what));  // a query: nothing written
    throw;
  }
  ++stats_.queries;
  return r;
}

void Hs2PriorState::lookup(std::span<const Guid> guids, std::vector<PriorEntity>& out) {
  // Appended only once every batch is answered: a throwing lookup() appends nothing.
  std::vector<PriorEntity> all;
  lookup_in_batches(guids, [&](std::vector<PriorEntity>& found) {
    all.reserve(all.size() + found.size());
    for (PriorEntity& p : found) all.push_back(std::move(p));
  });
  out.reserve(out.size() + all.size());
  for (PriorEntity& p : all) out.push_back(std::move(p));
}

void Hs2PriorState::lookup_in_batches(std::span<const Guid> guids_in,
                                      const std::function<void(std::vector<PriorEntity>&)>& each) {
  std::vector<Guid> guids(guids_in.begin(), guids_in.end());
  std::sort(guids.begin(), guids.end());
  guids.erase(std::unique(guids.begin(), guids.end()), guids.end());
  if (guids.empty()) return;
  ++stats_.lookups;
  lookup_queries_ = 0;

  // Every key literal has the same length; the entity_flat statement is the longer of the two.
  std::string one_key;
  append_key(one_key, guids.front().bytes, options_.key_encoding);
  const std::size_t fixed = std::max(entity_flat_prefix(options_).size(),
                                     classifications_prefix(options_).size()) +
                            1;  // ")"
  std::size_t batch_keys = lookup_batch_keys(options_, last_bytes_per_key_);
  std::vector<PriorEntity> found;
  for (std::size_t begin = 0; begin < guids.size();) {
    std::size_t end = begin + 1;
    std::size_t bytes = fixed + one_key.size();
    while (end < guids.size() && end - begin < batch_keys &&
           bytes + 2 + one_key.size() <= options_.batch_bytes) {
      bytes += 2 + one_key.size();
      ++end;
    }
    const std::span<const Guid> batch(guids.data() + begin, end - begin);
    const std::string where = fmt::format("keys {}-{} of {}", begin + 1, end, guids.size());
    found.clear();
    found.resize(batch.size());
    for (std::size_t i = 0; i < batch.size(); ++i) found[i].guid = batch[i];
    // The entry of a guid of the batch (sorted), null for one that was not asked about.
    const auto entry = [&](const Guid& g) -> PriorEntity* {
      const auto it = std::lower_bound(batch.begin(), batch.end(), g);
      return it != batch.end() && *it == g ? &found[static_cast<std::size_t>(it - batch.begin())]
                                           : nullptr;
    };

    Hs2QueryResult flat = run(entity_flat_query(batch, options_), "entity_flat", where);
    check_shape(flat, 1 + kFlatColumns.size(), "entity_flat");
    for (auto& row : flat.rows) {
      const Guid g = row_guid(row[0], "entity_flat");
      PriorEntity* p = entry(g);
      if (p == nullptr || p->exists) {
        throw Hs2Error(Hs2ErrorKind::kInternal,
                       fmt::format("prior-state lookup: entity_flat returned {} guid {}",
                                   p == nullptr ? "an unrequested" : "a second row for", g.hex()));
      }
      p->exists = true;
      p->type_name = std::move(row[1]);       // kFlatColumns[0]
      p->qualified_name = std::move(row[2]);  // kFlatColumns[1]
      p->props_json = std::move(row[3]);      // kFlatColumns[2]
    }
    flat.rows.clear();

    Hs2QueryResult tags =
        run(classifications_query(batch, options_), "entity_classifications", where);
    check_shape(tags, 1 + kTagColumns.size(), "entity_classifications");
    for (auto& row : tags.rows) {
      const Guid g = row_guid(row[0], "entity_classifications");
      PriorEntity* p = entry(g);
      if (p == nullptr || !row[1]) {
        throw Hs2Error(
            Hs2ErrorKind::kInternal,
            fmt::format("prior-state lookup: entity_classifications returned {} for "
                        "guid {}",
                        p == nullptr ? "an unrequested row" : "a NULL tag_name", g.hex()));
      }
      p->tags.push_back(std::move(*row[1]));
    }
    stats_.tag_rows += tags.rows.size();

    std::size_t answered = 0;
    for (PriorEntity& p : found) {
      std::sort(p.tags.begin(), p.tags.end());
      if (std::adjacent_find(p.tags.begin(), p.tags.end()) != p.tags.end()) {
        throw Hs2Error(Hs2ErrorKind::kInternal,
                       fmt::format("prior-state lookup: entity_classifications returned a tag "
                                   "twice for guid {}",
                                   p.guid.hex()));
      }
      if (p.exists) ++stats_.found;
      answered += answer_bytes(p);
    }
    stats_.guids += batch.size();
    last_bytes_per_key_ = std::max<std::size_t>(answered / batch.size(), 1);
    batch_keys = lookup_batch_keys(options_, last_bytes_per_key_);
    begin = end;
    each(found);
  }
}

}  // namespace atlas2kudu
