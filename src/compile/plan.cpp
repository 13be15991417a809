#include "compile/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <string_view>
#include <tuple>

#include "atlas2kudu/error.h"
#include "compile/impala_sql.h"
#include "compile/schema.h"

namespace atlas2kudu {

namespace {

// Cuts a list of items into statements of at most max_rows rows and max_bytes bytes:
// head item sep item sep item tail. Items added with the index of their row in the window are
// recorded as the statement's row_spans (UPSERTs), so that Statement::part() can re-plan a part.
class Batcher {
 public:
  Batcher(std::vector<Statement>& out, std::string_view table, std::string head, std::string sep,
          std::string tail, const CompileOptions& options)
      : out_(out),
        table_(table),
        head_(std::move(head)),
        sep_(std::move(sep)),
        tail_(std::move(tail)),
        max_rows_(std::max<std::size_t>(options.batch_rows, 1)),
        max_bytes_(options.batch_bytes) {}
  ~Batcher() = default;

  // Appends one UPSERT row whose text is produced by `write(std::string&)`; `net_row` is the index
  // of the row in the window's vector (recorded in the statement's row_spans).
  template <typename Write>
  void add_row(std::size_t net_row, Write&& write) {
    add(std::forward<Write>(write), 1, net_row);
  }

  // Appends one item whose text is produced by `write(std::string&)`.
  template <typename Write>
  void add(Write&& write, std::size_t rows = 1, std::optional<std::size_t> net_row = {}) {
    if (rows_ == 0) {
      cur_.clear();
      // The previous statement's size is the best guess for this one: no regrowing on the way.
      cur_.reserve(std::min(last_size_ + last_size_ / 8, max_bytes_));
      cur_.append(head_);
      const std::size_t begin = cur_.size();
      write(cur_);
      rows_ = rows;
      span(begin, net_row);
      return;
    }
    const std::size_t mark = cur_.size();
    cur_.append(sep_);
    const std::size_t begin = cur_.size();
    write(cur_);
    if (rows_ + rows > max_rows_ || cur_.size() + tail_.size() > max_bytes_) {
      std::string item = cur_.substr(begin);
      cur_.resize(mark);
      flush();
      cur_.clear();
      cur_.append(head_);
      cur_.append(item);
      rows_ = rows;
      span(head_.size(), net_row);
      return;
    }
    rows_ += rows;
    span(begin, net_row);
  }

  // --annotate: the item just added deletes this row of the window by key, or this entity's rows.
  void deleted_row(std::uint32_t net_row) { deleted_rows_.push_back(net_row); }
  void deleted_entity(const Guid& guid) { deleted_entities_.push_back(guid); }

  void flush() {
    if (rows_ == 0) return;
    cur_.append(tail_);
    last_size_ = cur_.size();
    Statement& s = out_.emplace_back();
    s.table = table_;
    s.sql = std::move(cur_);
    s.rows = rows_;
    s.row_spans = std::move(spans_);
    s.deleted_rows = std::move(deleted_rows_);
    s.deleted_entities = std::move(deleted_entities_);
    cur_ = std::string();
    spans_.clear();
    deleted_rows_.clear();
    deleted_entities_.clear();
    rows_ = 0;
  }

 private:
  // Records the row just appended (from `begin` to the end of cur_), for an UPSERT.
  void span(std::size_t begin, std::optional<std::size_t> net_row) {
    if (!net_row) return;
    spans_.push_back(StatementRow{static_cast<std::uint32_t>(begin),
                                  static_cast<std::uint32_t>(cur_.size()),
                                  static_cast<std::uint32_t>(*net_row)});
  }

  std::vector<Statement>& out_;
  std::string_view table_;
  std::string head_, sep_, tail_;
  std::size_t max_rows_, max_bytes_;
  std::string cur_;
  std::vector<StatementRow> spans_;
  std::vector<std::uint32_t> deleted_rows_;
  std::vector<Guid> deleted_entities_;
  std::size_t rows_ = 0;
  std::size_t last_size_ = 0;
};

// Byte order of 16-byte keys (guids, digests) as two big-endian words: one comparison instead of
// a memcmp call; sorting rows by key is a large part of planning.
inline std::pair<std::uint64_t, std::uint64_t> key_words(const std::array<std::uint8_t, 16>& k) {
  std::uint64_t a, b;
  std::memcpy(&a, k.data(), 8);
  std::memcpy(&b, k.data() + 8, 8);
  return {__builtin_bswap64(a), __builtin_bswap64(b)};
}
// Software prefetch of a string's text (and of the row structs before it): see the upsert loops.
constexpr std::size_t kAhead = 4;
inline void prefetch(std::string_view text) {
  __builtin_prefetch(text.data());
  if (text.size() > 64) __builtin_prefetch(text.data() + 64);
}
// Every cache line of a row struct: the texts' pointers and sizes sit past its first line (an
// AuditRow or a FlatRow is 112 bytes), and prefetch(text) a few rows later reads them.
template <typename Row>
inline void prefetch_row(const Row* row) {
  const char* bytes = reinterpret_cast<const char*>(row);
  for (std::size_t at = 0; at < sizeof(Row); at += 64) __builtin_prefetch(bytes + at);
  __builtin_prefetch(bytes + sizeof(Row) - 1);
}

// Impala refuses an expression of more than 10000 children (Expr's EXPR_CHILDREN_LIMIT); a CASE
// has one for its operand and two per WHEN. Whatever --batch-rows says, an edge delete's CASE
// stays under it.
constexpr std::size_t kMaxCaseWhens = 4999;

inline bool key_less(const std::array<std::uint8_t, 16>& x, const std::array<std::uint8_t, 16>& y) {
  return key_words(x) < key_words(y);
}

class Planner {
 public:
  Planner(const CompileOptions& options, CompiledWindow& window)
      : options_(options), w_(window), enc_(options.key_encoding), annotate_(options.annotate) {}

  void run(NetWindow& net) {
    sort_rows(net);
    deletes(net);
    upserts(net);
  }

 private:
  static bool edge_less(const EdgeRow& x, const EdgeRow& y) {
    return std::tie(x.a, x.elabel, x.b) < std::tie(y.a, y.elabel, y.b);
  }

  void sort_rows(NetWindow& net) {
    // entity_flat and entity_audit rows are large (several strings each): they are put in order
    // through an index rather than moved.
    // The keys are copied next to the row numbers and sorted there: comparing through the row
    // numbers would miss the cache on two rows per comparison.
    struct FlatKey {
      std::pair<std::uint64_t, std::uint64_t> guid;
      std::uint32_t row;
    };
    std::vector<FlatKey> flat_keys(net.flat.size());
    for (std::uint32_t i = 0; i < flat_keys.size(); ++i) {
      flat_keys[i] = {key_words(net.flat[i].guid.bytes), i};
    }
    // One row per guid: the order is total.
    std::sort(flat_keys.begin(), flat_keys.end(),
              [](const FlatKey& x, const FlatKey& y) { return x.guid < y.guid; });
    flat_order_.resize(flat_keys.size());
    for (std::size_t i = 0; i < flat_keys.size(); ++i) flat_order_[i] = flat_keys[i].row;
    std::sort(net.by_qn.begin(), net.by_qn.end(),
              [](const ByQnRow& x, const ByQnRow& y) { return key_less(x.digest, y.digest); });
    std::sort(net.edge_out.begin(), net.edge_out.end(), edge_less);
    std::sort(net.edge_in.begin(), net.edge_in.end(), edge_less);
    std::sort(net.tags.begin(), net.tags.end(), [](const TagRow& x, const TagRow& y) {
      return std::tie(x.tag_name, x.guid) < std::tie(y.tag_name, y.guid);
    });
    // By key, ties in event order (the row number), then keep the last row of each key: the row
    // of the last event, as in sequence.
    struct AuditKey {
      std::tuple<std::pair<std::uint64_t, std::uint64_t>, std::int64_t, std::int64_t> key;
      std::uint32_t row;
    };
    std::vector<AuditKey> audit_keys(net.audit.size());
    for (std::uint32_t i = 0; i < audit_keys.size(); ++i) {
      const AuditRow& r = net.audit[i];
      audit_keys[i] = {{key_words(r.guid.bytes), r.event_ts, r.seq}, i};
    }
    std::sort(audit_keys.begin(), audit_keys.end(), [](const AuditKey& x, const AuditKey& y) {
      return x.key != y.key ? x.key < y.key : x.row < y.row;
    });
    audit_order_.clear();
    for (std::size_t i = 0; i < audit_keys.size(); ++i) {
      if (i + 1 < audit_keys.size() && audit_keys[i].key == audit_keys[i + 1].key) continue;
      audit_order_.push_back(audit_keys[i].row);
    }
    // 16-byte keys compared as two words (key_less) rather than through memcmp calls.
    std::sort(net.by_qn_guarded.begin(), net.by_qn_guarded.end(), [](const auto& x, const auto& y) {
      return std::pair(key_words(x.first), key_words(x.second.bytes)) <
             std::pair(key_words(y.first), key_words(y.second.bytes));
    });
    net.by_qn_guarded.erase(std::unique(net.by_qn_guarded.begin(), net.by_qn_guarded.end()),
                            net.by_qn_guarded.end());
    const auto by_guid = [](const auto& x, const auto& y) {
      return key_less(x.guid.bytes, y.guid.bytes);
    };
    std::sort(net.by_qn_cleanups.begin(), net.by_qn_cleanups.end(), by_guid);
    std::sort(net.by_qn_type_cleanups.begin(), net.by_qn_type_cleanups.end(),
              [](const auto& x, const auto& y) {
                return x.second != y.second ? x.second < y.second
                                            : key_less(x.first.bytes, y.first.bytes);
              });
    std::sort(net.tag_cleanups.begin(), net.tag_cleanups.end(), by_guid);
    std::sort(net.edge_cascades.begin(), net.edge_cascades.end(),
              [](const Guid& x, const Guid& y) { return key_less(x.bytes, y.bytes); });
    net.edge_cascades.erase(std::unique(net.edge_cascades.begin(), net.edge_cascades.end()),
                            net.edge_cascades.end());
  }

  std::string table(std::string_view name) const {
    return qualified_table(options_.database, name);
  }

  std::string key(const std::array<std::uint8_t, 16>& bytes) const {
    std::string s;
    append_key(s, bytes, enc_);
    return s;
  }
  std::string str(std::string_view text) const {
    std::string s;
    append_string_literal(s, text);
    return s;
  }

  // Appends the keys (guids or digests) of [first, last) as an IN-list's items: k1, k2, ...
  template <typename It>
  void append_keys(std::string& sql, It first, It last) const {
    for (It it = first; it != last; ++it) {
      if (it != first) sql.append(", ");
      append_key(sql, key_bytes(*it), enc_);
    }
  }
  static const std::array<std::uint8_t, 16>& key_bytes(const Guid& g) { return g.bytes; }
  static const QnDigest& key_bytes(const QnDigest& d) { return d; }

  // What the items of a DELETE stand for, for --annotate: item i deletes row rows[i] of the
  // window by key, or the rows of entity entities[i] (the vector given, the other empty).
  struct DeleteSubjects {
    std::vector<std::uint32_t> rows;
    std::vector<Guid> entities;
  };

  // DELETE FROM t WHERE `col` IN (items)<tail>
  void delete_in(std::string_view name, std::string_view col, const std::vector<std::string>& items,
                 const DeleteSubjects& subjects, std::string tail = "") {
    if (items.empty()) return;
    Batcher b(w_.deletes, name,
              "DELETE FROM " + table(name) + " WHERE `" + std::string(col) + "` IN (", ", ",
              ")" + tail, options_);
    for (std::size_t i = 0; i < items.size(); ++i) {
      b.add([&](std::string& s) { s.append(items[i]); });
      if (i < subjects.rows.size()) b.deleted_row(subjects.rows[i]);
      if (i < subjects.entities.size()) b.deleted_entity(subjects.entities[i]);
    }
    b.flush();
  }

  // DELETE FROM t WHERE `col_a` IN (as)[ AND middle] AND `col_b` IN (bs): names |as| x |bs| keys,
  // all of them wanted. Chunked so that no statement names more than batch_rows keys. With
  // --annotate, row_of(i, j) is the window row of the key (as[i], bs[j]).
  template <typename RowOf>
  void delete_product(std::string_view name, std::string_view col_a,
                      const std::vector<std::string>& as, const std::string& middle,
                      std::string_view col_b, const std::vector<std::string>& bs, RowOf&& row_of) {
    const std::size_t max_rows = std::max<std::size_t>(options_.batch_rows, 1);
    const std::string head =
        "DELETE FROM " + table(name) + " WHERE `" + std::string(col_a) + "` IN (";
    const std::string mid = ")" + (middle.empty() ? std::string() : " AND " + middle) + " AND `" +
                            std::string(col_b) + "` IN (";
    std::size_t a_chunk = std::min(as.size(), max_rows);
    std::size_t b_chunk = std::max<std::size_t>(1, max_rows / a_chunk);
    const auto bytes = [&](std::size_t na, std::size_t nb) {
      std::size_t longest_a = 0, longest_b = 0;
      for (const auto& a : as) longest_a = std::max(longest_a, a.size());
      for (const auto& b : bs) longest_b = std::max(longest_b, b.size());
      return head.size() + mid.size() + 1 + na * (longest_a + 2) + nb * (longest_b + 2);
    };
    while (bytes(a_chunk, std::min(b_chunk, bs.size())) > options_.batch_bytes &&
           (a_chunk > 1 || b_chunk > 1)) {
      if (a_chunk >= b_chunk)
        a_chunk = (a_chunk + 1) / 2;
      else
        b_chunk = (b_chunk + 1) / 2;
    }
    for (std::size_t i = 0; i < as.size(); i += a_chunk) {
      const std::size_t ia = std::min(as.size(), i + a_chunk);
      for (std::size_t j = 0; j < bs.size(); j += b_chunk) {
        const std::size_t jb = std::min(bs.size(), j + b_chunk);
        std::string sql = head;
        for (std::size_t k = i; k < ia; ++k) {
          if (k > i) sql.append(", ");
          sql.append(as[k]);
        }
        sql.append(mid);
        for (std::size_t k = j; k < jb; ++k) {
          if (k > j) sql.append(", ");
          sql.append(bs[k]);
        }
        sql.push_back(')');
        Statement& s = w_.deletes.emplace_back();
        s.table = name;
        s.sql = std::move(sql);
        s.rows = (ia - i) * (jb - j);
        if (annotate_) {
          for (std::size_t k = i; k < ia; ++k) {
            for (std::size_t l = j; l < jb; ++l) s.deleted_rows.push_back(row_of(k, l));
          }
        }
      }
    }
  }

  // Keyed deletes of (a, elabel, b) rows, per label, the as in key order, as many keys to a
  // statement as batch_rows and batch_bytes allow:
  //   DELETE FROM t WHERE `a` IN (as) AND `elabel` IN ('l') AND `b` IN (bs)
  //     AND CASE `a` WHEN a1 THEN `b` IN (bs of a1) WHEN a2 THEN `b` IN (bs of a2) END
  // Kudu filters with the IN-lists; the CASE, which Impala evaluates on the rows Kudu returns,
  // keeps the statement to the wanted keys. It is left out when every a of the
  // statement has the same bs (the product is then exact). Without it, pairs that share neither
  // their a nor their set of bs (many entities each losing one relationship in a window) would
  // take one statement each.
  struct EdgeKeys {
    Guid a;
    std::vector<Guid> bs;             // in key order
    std::vector<std::uint32_t> rows;  // --annotate: the window row of each (a, label, b)
  };
  void delete_edges(const schema::Table& t, const std::vector<EdgeRow>& rows) {
    std::map<std::string_view, std::vector<EdgeKeys>> by_label;  // in a order
    for (std::size_t i = 0; i < rows.size();) {
      std::size_t j = i;
      EdgeKeys e{rows[i].a, {}, {}};
      for (; j < rows.size() && rows[j].a == rows[i].a && rows[j].elabel == rows[i].elabel; ++j) {
        if (!rows[j].delete_first) continue;
        e.bs.push_back(rows[j].b);
        if (annotate_) e.rows.push_back(static_cast<std::uint32_t>(j));
      }
      if (!e.bs.empty()) by_label[rows[i].elabel].push_back(std::move(e));
      i = j;
    }
    for (const auto& [label, keys] : by_label) delete_edge_keys(t, label, keys);
  }

  void delete_edge_keys(const schema::Table& t, std::string_view label,
                        const std::vector<EdgeKeys>& entries) {
    const std::string_view col_a = t.column(0), col_b = t.column(2);
    const std::size_t max_rows = std::max<std::size_t>(options_.batch_rows, 1);
    const std::string head =
        "DELETE FROM " + table(t.name) + " WHERE `" + std::string(col_a) + "` IN (";
    const std::string mid =
        ") AND `elabel` IN (" + str(label) + ") AND `" + std::string(col_b) + "` IN (";
    const std::string case_head = ") AND CASE `" + std::string(col_a) + "`";
    const std::string then = " THEN `" + std::string(col_b) + "` IN (";
    const std::size_t key_bytes = key(Guid{}.bytes).size();
    const std::size_t fixed = head.size() + mid.size() + case_head.size() + 4;  // " END"
    // A part of an entry: a and bs[first, last).
    struct Part {
      const EdgeKeys* e;
      std::size_t first, last;
    };
    std::vector<Part> batch;
    std::size_t batch_keys = 0, estimate = fixed;  // estimate: the batch's bytes, at most
    const auto part_bytes = [&](std::size_t n) {
      // a in the a-list and in its WHEN, its bs in the b-list and in its THEN.
      return 2 * (key_bytes + 2) + 6 + then.size() + 1 + 2 * n * (key_bytes + 2);
    };
    const auto flush = [&] {
      if (batch.empty()) return;
      std::vector<Guid> bs;
      bool exact = true;
      for (const Part& p : batch) {
        bs.insert(bs.end(), p.e->bs.begin() + p.first, p.e->bs.begin() + p.last);
        exact = exact && std::equal(p.e->bs.begin() + p.first, p.e->bs.begin() + p.last,
                                    batch[0].e->bs.begin() + batch[0].first,
                                    batch[0].e->bs.begin() + batch[0].last);
      }
      std::sort(bs.begin(), bs.end());
      bs.erase(std::unique(bs.begin(), bs.end()), bs.end());
      Statement& s = w_.deletes.emplace_back();
      s.table = t.name;
      std::string& sql = s.sql;
      sql.reserve(estimate);
      sql.append(head);
      for (std::size_t i = 0; i < batch.size(); ++i) {
        if (i) sql.append(", ");
        append_key(sql, batch[i].e->a.bytes, enc_);
      }
      sql.append(mid);
      append_keys(sql, bs.begin(), bs.end());
      if (exact) {
        sql.push_back(')');
      } else {
        sql.append(case_head);
        for (const Part& p : batch) {
          sql.append(" WHEN ");
          append_key(sql, p.e->a.bytes, enc_);
          sql.append(then);
          append_keys(sql, p.e->bs.begin() + p.first, p.e->bs.begin() + p.last);
          sql.push_back(')');
        }
        sql.append(" END");
      }
      s.rows = batch_keys;
      if (annotate_) {
        for (const Part& p : batch) {
          s.deleted_rows.insert(s.deleted_rows.end(), p.e->rows.begin() + p.first,
                                p.e->rows.begin() + p.last);
        }
      }
      batch.clear();
      batch_keys = 0;
      estimate = fixed;
    };
    for (const EdgeKeys& e : entries) {
      for (std::size_t first = 0; first < e.bs.size();) {
        // The part of e's bs that fits one statement of its own.
        std::size_t last = std::min(e.bs.size(), first + max_rows);
        while (last - first > 1 && fixed + part_bytes(last - first) > options_.batch_bytes) {
          last = first + (last - first + 1) / 2;
        }
        // A second part of one a (its bs did not fit one statement) never joins the first: an a
        // is named once in a CASE.
        if (!batch.empty() &&
            (batch_keys + (last - first) > max_rows || batch.size() == kMaxCaseWhens ||
             estimate + part_bytes(last - first) > options_.batch_bytes || batch.back().e == &e)) {
          flush();
        }
        batch.push_back(Part{&e, first, last});
        batch_keys += last - first;
        estimate += part_bytes(last - first);
        first = last;
      }
    }
    flush();
  }

  // entity_flat's statements come last in each phase and run after the rest of it
  // (CompiledWindow).
  void deletes(const NetWindow& net) {
    {  // entity_by_qn: keyed, guarded, clean-ups
      std::vector<std::string> keys;
      DeleteSubjects subjects;
      for (std::size_t i = 0; i < net.by_qn.size(); ++i) {
        if (!net.by_qn[i].delete_first) continue;
        keys.push_back(key(net.by_qn[i].digest));
        if (annotate_) subjects.rows.push_back(static_cast<std::uint32_t>(i));
      }
      delete_in(schema::kEntityByQn.name, schema::kEntityByQn.column(0), keys, subjects);
      guarded(net.by_qn_guarded);
      by_qn_cleanups(net.by_qn_cleanups);
      // Rows under another type, one group per type: `guid` IN (…) AND `type_name` NOT IN ('t').
      for (std::size_t i = 0; i < net.by_qn_type_cleanups.size();) {
        const std::string_view type = net.by_qn_type_cleanups[i].second;
        std::vector<std::string> keys;
        DeleteSubjects subjects;
        for (; i < net.by_qn_type_cleanups.size() && net.by_qn_type_cleanups[i].second == type;
             ++i) {
          const Guid& g = net.by_qn_type_cleanups[i].first;
          keys.push_back(key(g.bytes));
          if (annotate_) subjects.entities.push_back(g);
        }
        std::string tail = " AND `type_name` NOT IN (";
        append_string_literal(tail, type);
        tail.push_back(')');
        delete_in(schema::kEntityByQn.name, schema::kEntityByQn.column(1), keys, subjects, tail);
      }
    }
    {  // edges
      delete_edges(schema::kEdgeOut, net.edge_out);
      delete_edges(schema::kEdgeIn, net.edge_in);
      std::vector<std::string> keys;
      for (const Guid& g : net.edge_cascades) keys.push_back(key(g.bytes));
      DeleteSubjects subjects;
      if (annotate_) subjects.entities = net.edge_cascades;
      for (const schema::Table* t : {&schema::kEdgeOut, &schema::kEdgeIn}) {
        delete_in(t->name, t->column(0), keys, subjects);  // the guid as the edge's leading end
        delete_in(t->name, t->column(2), keys, subjects);  // ... and as its other end
      }
    }
    {  // entity_classifications: keyed by tag (tags with the same guid set together)
      std::map<std::string, std::vector<Guid>> by_tag;
      for (const TagRow& r : net.tags) {
        if (r.delete_first) by_tag[r.tag_name].push_back(r.guid);
      }
      std::map<std::vector<Guid>, std::vector<std::string>> groups;
      for (auto& [tag, guids] : by_tag) groups[std::move(guids)].push_back(tag);
      for (const auto& entry : groups) {
        const std::vector<Guid>& guids = entry.first;  // not a structured binding: see above
        const std::vector<std::string>& tags = entry.second;
        std::vector<std::string> t_lits, g_lits;
        for (const auto& t : tags) t_lits.push_back(str(t));
        for (const auto& g : guids) g_lits.push_back(key(g.bytes));
        delete_product(
            schema::kEntityClassifications.name,
            schema::kEntityClassifications.column(schema::kTagTagName), t_lits, "",
            schema::kEntityClassifications.column(schema::kTagGuid), g_lits,
            [&](std::size_t i, std::size_t j) { return tag_row(net, tags[i], guids[j]); });
      }
      // Clean-ups, one group per distinct kept set.
      std::map<std::vector<std::string>, std::pair<std::vector<std::string>, DeleteSubjects>>
          by_keep;
      for (const auto& c : net.tag_cleanups) {
        auto& [keys, subjects] = by_keep[c.keep];
        keys.push_back(key(c.guid.bytes));
        if (annotate_) subjects.entities.push_back(c.guid);
      }
      for (const auto& [keep, guids_subjects] : by_keep) {
        std::string tail;
        // The tags one event gives an entity: more than an IN-list may hold (kMaxBatchRows) are
        // kept by several NOT IN-lists, `tag_name` NOT IN (A) AND `tag_name` NOT IN (B).
        for (std::size_t i = 0; i < keep.size(); ++i) {
          if (i % kMaxBatchRows == 0) {
            tail.append(i == 0 ? " AND `tag_name` NOT IN (" : ") AND `tag_name` NOT IN (");
          } else {
            tail.append(", ");
          }
          append_string_literal(tail, keep[i]);
        }
        if (!keep.empty()) tail.push_back(')');
        delete_in(schema::kEntityClassifications.name,
                  schema::kEntityClassifications.column(schema::kTagGuid), guids_subjects.first,
                  guids_subjects.second, tail);
      }
    }
    {  // entity_flat
      std::vector<std::string> keys;
      DeleteSubjects subjects;
      for (const std::uint32_t i : flat_order_) {
        if (!net.flat[i].delete_first) continue;
        keys.push_back(key(net.flat[i].guid.bytes));
        if (annotate_) subjects.rows.push_back(i);
      }
      const std::size_t first = w_.deletes.size();
      delete_in(schema::kEntityFlat.name, schema::kEntityFlat.column(schema::kFlatGuid), keys,
                subjects);
      for (std::size_t i = first; i < w_.deletes.size(); ++i) w_.deletes[i].after_the_rest = true;
    }
  }

  // The index of the (tag, guid) row in net.tags (sorted by tag, then guid).
  static std::uint32_t tag_row(const NetWindow& net, const std::string& tag, const Guid& guid) {
    const auto it = std::lower_bound(
        net.tags.begin(), net.tags.end(), std::tie(tag, guid),
        [](const TagRow& r, const auto& key) { return std::tie(r.tag_name, r.guid) < key; });
    return static_cast<std::uint32_t>(it - net.tags.begin());
  }

  // `qn_digest` IN (…) AND `guid` IN (…): deletes every listed digest that maps to any listed
  // guid. In a store this tool maintains, a by_qn row maps to a guid only from that entity's
  // current digest, so the cross product removes nothing beyond the listed pairs.
  void guarded(const std::vector<std::pair<QnDigest, Guid>>& pairs) {
    const std::size_t max_rows = std::max<std::size_t>(options_.batch_rows, 1);
    const std::size_t per_key = key(Guid{}.bytes).size() + 2;
    const std::string head =
        "DELETE FROM " + table(schema::kEntityByQn.name) + " WHERE `qn_digest` IN (";
    for (std::size_t i = 0; i < pairs.size();) {
      std::vector<QnDigest> ds;
      std::vector<Guid> gs;
      std::size_t j = i;
      for (; j < pairs.size() && j - i < max_rows; ++j) {
        if (j > i && head.size() + 40 + 2 * per_key * (j - i + 1) > options_.batch_bytes) break;
        ds.push_back(pairs[j].first);
        gs.push_back(pairs[j].second);
      }
      std::sort(ds.begin(), ds.end());
      ds.erase(std::unique(ds.begin(), ds.end()), ds.end());
      std::sort(gs.begin(), gs.end());
      gs.erase(std::unique(gs.begin(), gs.end()), gs.end());
      std::string sql = head;
      append_keys(sql, ds.begin(), ds.end());
      sql.append(") AND `guid` IN (");
      append_keys(sql, gs.begin(), gs.end());
      sql.push_back(')');
      Statement& s = w_.deletes.emplace_back();
      s.table = schema::kEntityByQn.name;
      s.sql = std::move(sql);
      s.rows = j - i;
      if (annotate_) s.deleted_entities = std::move(gs);
      i = j;
    }
  }

  // `guid` IN (…) AND `qn_digest` NOT IN (kept digests of those guids). Keeping the union is
  // exact: a digest some listed guid keeps has a pending upsert (or a keyed delete) in this
  // window that decides its final state whatever the delete phase does to it.
  void by_qn_cleanups(const std::vector<CleanUp<QnDigest>>& cleanups) {
    const std::size_t max_rows = std::max<std::size_t>(options_.batch_rows, 1);
    const std::size_t per_key = key(Guid{}.bytes).size() + 2;
    const std::string head =
        "DELETE FROM " + table(schema::kEntityByQn.name) + " WHERE `guid` IN (";
    for (std::size_t i = 0; i < cleanups.size();) {
      std::vector<QnDigest> keep;
      std::size_t j = i;
      std::size_t keys = 0;
      for (; j < cleanups.size() && j - i < max_rows; ++j) {
        const std::size_t more = 1 + cleanups[j].keep.size();
        if (j > i && head.size() + 40 + per_key * (keys + more) > options_.batch_bytes) break;
        keys += more;
        keep.insert(keep.end(), cleanups[j].keep.begin(), cleanups[j].keep.end());
      }
      std::sort(keep.begin(), keep.end());
      keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
      std::string sql = head;
      for (std::size_t k = i; k < j; ++k) {
        if (k > i) sql.append(", ");
        append_key(sql, cleanups[k].guid.bytes, enc_);
      }
      sql.push_back(')');
      if (!keep.empty()) {
        sql.append(" AND `qn_digest` NOT IN (");
        append_keys(sql, keep.begin(), keep.end());
        sql.push_back(')');
      }
      Statement& s = w_.deletes.emplace_back();
      s.table = schema::kEntityByQn.name;
      s.sql = std::move(sql);
      s.rows = j - i;
      if (annotate_) {
        for (std::size_t k = i; k < j; ++k) s.deleted_entities.push_back(cleanups[k].guid);
      }
      i = j;
    }
  }

  // UPSERT INTO t (every column of t, in schema order) VALUES\n
  std::string upsert_head(const schema::Table& t) const {
    std::string head = "UPSERT INTO " + table(t.name) + " (";
    for (std::size_t i = 0; i < t.columns.size(); ++i) {
      if (i) head.append(", ");
      append_identifier(head, t.column(i));
    }
    head.append(") VALUES\n");
    return head;
  }

  void upserts(const NetWindow& net) {
    {
      Batcher b(w_.upserts, schema::kEntityByQn.name, upsert_head(schema::kEntityByQn), ",\n", "",
                options_);
      for (std::size_t i = 0; i < net.by_qn.size(); ++i) {
        if (i + kAhead < net.by_qn.size()) prefetch(net.by_qn[i + kAhead].type_name);
        const ByQnRow& r = net.by_qn[i];
        if (!r.upsert) continue;
        b.add_row(i, [&](std::string& s) {
          s.push_back('(');
          append_key(s, r.digest, enc_);
          s.append(", ");
          append_key(s, r.guid.bytes, enc_);
          s.append(", ");
          append_string_literal(s, r.type_name);
          s.push_back(')');
        });
      }
      b.flush();
    }
    edge_upserts(schema::kEdgeOut, net.edge_out);
    edge_upserts(schema::kEdgeIn, net.edge_in);
    {
      Batcher b(w_.upserts, schema::kEntityClassifications.name,
                upsert_head(schema::kEntityClassifications), ",\n", "", options_);
      for (std::size_t i = 0; i < net.tags.size(); ++i) {
        if (i + kAhead < net.tags.size()) prefetch(net.tags[i + kAhead].attrs_json);
        const TagRow& r = net.tags[i];
        if (!r.upsert) continue;
        b.add_row(i, [&](std::string& s) {
          s.push_back('(');
          append_string_literal(s, r.tag_name);
          s.append(", ");
          append_key(s, r.guid.bytes, enc_);
          s.append(r.propagated ? ", TRUE, " : ", FALSE, ");
          append_key(s, r.source_guid.bytes, enc_);
          s.append(", ");
          append_string_literal(s, r.attrs_json);
          s.append(", ");
          append_int(s, r.updated_ts);
          s.push_back(')');
        });
      }
      b.flush();
    }
    {
      Batcher b(w_.upserts, schema::kEntityAudit.name, upsert_head(schema::kEntityAudit), ",\n", "",
                options_);
      for (std::size_t n = 0; n < audit_order_.size(); ++n) {
        // Rows are visited in key order, scattered over the window's memory: fetch the text of
        // rows a few steps ahead while this one is written (the loads missed the cache).
        if (n + kAhead < audit_order_.size()) {
          const AuditRow& next = net.audit[audit_order_[n + kAhead]];
          prefetch(next.detail_json);
          prefetch(next.type_name);
          if (next.qualified_name) prefetch(*next.qualified_name);
        }
        if (n + 2 * kAhead < audit_order_.size())
          prefetch_row(&net.audit[audit_order_[n + 2 * kAhead]]);
        const AuditRow& r = net.audit[audit_order_[n]];
        b.add_row(audit_order_[n], [&](std::string& s) {
          s.push_back('(');
          append_key(s, r.guid.bytes, enc_);
          s.append(", ");
          append_int(s, r.event_ts);
          s.append(", ");
          append_int(s, r.seq);
          s.append(", ");
          append_string_literal(s, to_string(r.op));
          s.append(", ");
          append_string_literal(s, r.type_name);
          s.append(", ");
          if (r.qualified_name) {
            append_string_literal(s, *r.qualified_name);
          } else {
            s.append("NULL");
          }
          s.append(", ");
          append_string_literal(s, r.detail_json);
          s.push_back(')');
        });
      }
      b.flush();
    }
    const std::size_t first = w_.upserts.size();
    flat_upserts(net.flat);
    for (std::size_t i = first; i < w_.upserts.size(); ++i) w_.upserts[i].after_the_rest = true;
  }

  void edge_upserts(const schema::Table& t, const std::vector<EdgeRow>& rows) {
    Batcher b(w_.upserts, t.name, upsert_head(t), ",\n", "", options_);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (i + kAhead < rows.size()) {
        prefetch(rows[i + kAhead].elabel);
        prefetch(rows[i + kAhead].b_type);
      }
      const EdgeRow& r = rows[i];
      if (!r.upsert) continue;
      b.add_row(i, [&](std::string& s) {
        s.push_back('(');
        append_key(s, r.a.bytes, enc_);
        s.append(", ");
        append_string_literal(s, r.elabel);
        s.append(", ");
        append_key(s, r.b.bytes, enc_);
        s.append(", ");
        if (r.b_type.empty()) {
          s.append("NULL");  // the end had no typeName (Atlas always sends one)
        } else {
          append_string_literal(s, r.b_type);
        }
        s.push_back(')');
      });
    }
    b.flush();
  }

  // entity_flat rows grouped by column set. A row re-created after a delete lists every column.
  // Column i of the schema (i >= 1) is bit 1 << (i - 1) of FlatRow::mask.
  void flat_upserts(const std::vector<FlatRow>& rows) {
    const schema::Table& t = schema::kEntityFlat;
    std::map<std::uint8_t, std::vector<const FlatRow*>> groups;
    for (const std::uint32_t i : flat_order_) {
      const FlatRow& r = rows[i];
      if (!r.upsert) continue;
      groups[r.delete_first ? std::uint8_t{FlatRow::kAll} : r.mask].push_back(&r);
    }
    for (const auto& entry : groups) {
      // Not a structured binding: clang 14 (the fuzzing build) cannot capture one in a lambda.
      const std::uint8_t mask = entry.first;
      const std::vector<const FlatRow*>& group = entry.second;
      std::string head = "UPSERT INTO " + table(t.name) + " (";
      append_identifier(head, t.column(schema::kFlatGuid));
      for (std::size_t c = 1; c < t.columns.size(); ++c) {
        if (!(mask & (1u << (c - 1)))) continue;
        head.append(", ");
        append_identifier(head, t.column(c));
      }
      head.append(") VALUES\n");
      Batcher b(w_.upserts, t.name, head, ",\n", "", options_);
      for (std::size_t n = 0; n < group.size(); ++n) {
        if (n + kAhead < group.size()) {
          prefetch(group[n + kAhead]->props_json);
          prefetch(group[n + kAhead]->qualified_name);
          prefetch(group[n + kAhead]->type_name);
          prefetch(group[n + kAhead]->name);
        }
        if (n + 2 * kAhead < group.size()) prefetch_row(group[n + 2 * kAhead]);
        const FlatRow* r = group[n];
        b.add_row(static_cast<std::size_t>(r - rows.data()), [&](std::string& s) {
          s.push_back('(');
          append_key(s, r->guid.bytes, enc_);
          for (std::size_t c = 1; c < t.columns.size(); ++c) {
            const unsigned bit = 1u << (c - 1);
            if (!(mask & bit)) continue;
            s.append(", ");
            if (!(r->mask & bit)) {
              s.append("NULL");
              continue;
            }
            switch (c) {
              case schema::kFlatTypeName:
                append_string_literal(s, r->type_name);
                break;
              case schema::kFlatQualifiedName:
                append_string_literal(s, r->qualified_name);
                break;
              case schema::kFlatName:
                append_string_literal(s, r->name);
                break;
              case schema::kFlatState:
                append_string_literal(s, r->state_deleted ? "DELETED" : "ACTIVE");
                break;
              case schema::kFlatCreatedTs:
                append_int(s, r->created_ts);
                break;
              case schema::kFlatUpdatedTs:
                append_int(s, r->updated_ts);
                break;
              case schema::kFlatPropsJson:
                append_string_literal(s, r->props_json);
                break;
              default:
                break;
            }
          }
          s.push_back(')');
        });
      }
      b.flush();
    }
  }

  const CompileOptions& options_;
  CompiledWindow& w_;
  KeyEncoding enc_;
  bool annotate_;  // record what each DELETE deletes (Statement::deleted_rows, deleted_entities)
  std::vector<std::uint32_t> flat_order_;   // net.flat by guid
  std::vector<std::uint32_t> audit_order_;  // net.audit by key, the last row of each key
};

}  // namespace

Statement Statement::part(std::size_t first, std::size_t last) const {
  if (row_spans.empty() || first >= last || last > row_spans.size()) {
    throw Error(ErrorCategory::kInternal,
                fmt::format("Statement::part({}, {}) of a statement with {} row spans", first, last,
                            row_spans.size()));
  }
  const std::string_view text(sql);
  const std::string_view head = text.substr(0, row_spans.front().begin);
  const std::string_view tail = text.substr(row_spans.back().end);
  const std::string_view sep =
      row_spans.size() > 1 ? text.substr(row_spans[0].end, row_spans[1].begin - row_spans[0].end)
                           : std::string_view();
  Statement out;
  out.table = table;
  out.after_the_rest = after_the_rest;
  out.sql = std::string(head);
  out.rows = last - first;
  out.row_spans.reserve(last - first);
  for (std::size_t i = first; i < last; ++i) {
    if (i > first) out.sql.append(sep);
    const StatementRow& r = row_spans[i];
    const auto begin = static_cast<std::uint32_t>(out.sql.size());
    out.sql.append(text.substr(r.begin, r.end - r.begin));
    out.row_spans.push_back(
        StatementRow{begin, static_cast<std::uint32_t>(out.sql.size()), r.net_row});
  }
  out.sql.append(tail);
  return out;
}

CompiledWindow plan_window(NetWindow& net, const CompileOptions& options) {
  CompiledWindow window;
  window.index = net.info.index;
  window.first_event = net.info.first_event;
  window.last_event = net.info.last_event;
  window.span = net.info.span;
  window.comment = net.info.comment;
  Planner(options, window).run(net);
  return window;
}

}  // namespace atlas2kudu
