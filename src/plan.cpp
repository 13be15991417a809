#include "atlas2kudu/plan.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <tuple>

#include "atlas2kudu/impala_sql.h"

namespace atlas2kudu {

namespace {

// Cuts a list of items into statements of at most max_rows rows and max_bytes bytes:
// head item sep item sep item tail.
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

  // Appends one item whose text is produced by `write(std::string&)`.
  template <typename Write>
  void add(Write&& write, std::size_t rows = 1) {
    if (rows_ == 0) {
      cur_.clear();
      cur_.append(head_);
      write(cur_);
      rows_ = rows;
      return;
    }
    const std::size_t mark = cur_.size();
    cur_.append(sep_);
    write(cur_);
    if (rows_ + rows > max_rows_ || cur_.size() + tail_.size() > max_bytes_) {
      std::string item = cur_.substr(mark + sep_.size());
      cur_.resize(mark);
      flush();
      cur_.clear();
      cur_.append(head_);
      cur_.append(item);
      rows_ = rows;
      return;
    }
    rows_ += rows;
  }

  void flush() {
    if (rows_ == 0) return;
    cur_.append(tail_);
    out_.push_back(Statement{std::string(table_), std::move(cur_), rows_});
    cur_ = std::string();
    rows_ = 0;
  }

 private:
  std::vector<Statement>& out_;
  std::string_view table_;
  std::string head_, sep_, tail_;
  std::size_t max_rows_, max_bytes_;
  std::string cur_;
  std::size_t rows_ = 0;
};

class Planner {
 public:
  Planner(const CompileOptions& options, CompiledWindow& window)
      : options_(options), w_(window), enc_(options.key_encoding) {}

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
    std::sort(net.flat.begin(), net.flat.end(),
              [](const FlatRow& x, const FlatRow& y) { return x.guid < y.guid; });
    std::sort(net.by_qn.begin(), net.by_qn.end(),
              [](const ByQnRow& x, const ByQnRow& y) { return x.digest < y.digest; });
    std::sort(net.edge_out.begin(), net.edge_out.end(), edge_less);
    std::sort(net.edge_in.begin(), net.edge_in.end(), edge_less);
    std::sort(net.tags.begin(), net.tags.end(), [](const TagRow& x, const TagRow& y) {
      return std::tie(x.tag_name, x.guid) < std::tie(y.tag_name, y.guid);
    });
    std::sort(net.audit.begin(), net.audit.end(), [](const AuditRow& x, const AuditRow& y) {
      return std::tie(x.guid, x.event_ts, x.seq) < std::tie(y.guid, y.event_ts, y.seq);
    });
    std::sort(net.by_qn_guarded.begin(), net.by_qn_guarded.end());
    net.by_qn_guarded.erase(std::unique(net.by_qn_guarded.begin(), net.by_qn_guarded.end()),
                            net.by_qn_guarded.end());
    std::sort(net.by_qn_cleanups.begin(), net.by_qn_cleanups.end(),
              [](const auto& x, const auto& y) { return x.guid < y.guid; });
    std::sort(net.tag_cleanups.begin(), net.tag_cleanups.end(),
              [](const auto& x, const auto& y) { return x.guid < y.guid; });
    std::sort(net.edge_cascades.begin(), net.edge_cascades.end());
    net.edge_cascades.erase(std::unique(net.edge_cascades.begin(), net.edge_cascades.end()),
                            net.edge_cascades.end());
  }

  std::string table(std::string_view name) const { return qualified_table(options_.database, name); }

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

  // DELETE FROM t WHERE `col` IN (items)<tail>
  void delete_in(std::string_view name, std::string_view col, const std::vector<std::string>& items,
                 std::string tail = "") {
    if (items.empty()) return;
    Batcher b(w_.deletes, name,
              "DELETE FROM " + table(name) + " WHERE `" + std::string(col) + "` IN (", ", ",
              ")" + tail, options_);
    for (const std::string& item : items) b.add([&](std::string& s) { s.append(item); });
    b.flush();
  }

  // DELETE FROM t WHERE `col_a` IN (as)[ AND middle] AND `col_b` IN (bs): names |as| x |bs| keys,
  // all of them wanted. Chunked so that no statement names more than batch_rows keys.
  void delete_product(std::string_view name, std::string_view col_a,
                      const std::vector<std::string>& as, const std::string& middle,
                      std::string_view col_b, const std::vector<std::string>& bs) {
    const std::size_t max_rows = std::max<std::size_t>(options_.batch_rows, 1);
    const std::string head = "DELETE FROM " + table(name) + " WHERE `" + std::string(col_a) + "` IN (";
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
      if (a_chunk >= b_chunk) a_chunk = (a_chunk + 1) / 2;
      else b_chunk = (b_chunk + 1) / 2;
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
        w_.deletes.push_back(Statement{std::string(name), std::move(sql), (ia - i) * (jb - j)});
      }
    }
  }

  // Keyed deletes of (a, elabel, b) rows: (a, elabel) -> bs, then a-sets per (elabel, bs).
  void delete_edges(std::string_view name, std::string_view col_a, std::string_view col_b,
                    const std::vector<EdgeRow>& rows) {
    std::map<std::pair<std::string, std::vector<Guid>>, std::vector<Guid>> groups;
    for (std::size_t i = 0; i < rows.size();) {
      std::size_t j = i;
      std::vector<Guid> bs;
      for (; j < rows.size() && rows[j].a == rows[i].a && rows[j].elabel == rows[i].elabel; ++j) {
        if (rows[j].delete_first) bs.push_back(rows[j].b);
      }
      if (!bs.empty()) groups[{rows[i].elabel, std::move(bs)}].push_back(rows[i].a);
      i = j;
    }
    for (const auto& [label_bs, as] : groups) {
      std::vector<std::string> a_lits, b_lits;
      for (const Guid& g : as) a_lits.push_back(key(g.bytes));
      for (const Guid& g : label_bs.second) b_lits.push_back(key(g.bytes));
      delete_product(name, col_a, a_lits, "`elabel` IN (" + str(label_bs.first) + ")", col_b,
                     b_lits);
    }
  }

  void deletes(const NetWindow& net) {
    {  // entity_flat
      std::vector<std::string> keys;
      for (const FlatRow& r : net.flat) {
        if (r.delete_first) keys.push_back(key(r.guid.bytes));
      }
      delete_in("entity_flat", "guid", keys);
    }
    {  // entity_by_qn: keyed, guarded, clean-ups
      std::vector<std::string> keys;
      for (const ByQnRow& r : net.by_qn) {
        if (r.delete_first) keys.push_back(key(r.digest));
      }
      delete_in("entity_by_qn", "qn_digest", keys);
      guarded(net.by_qn_guarded);
      by_qn_cleanups(net.by_qn_cleanups);
    }
    {  // edges
      delete_edges("edge_out", "src", "dst", net.edge_out);
      delete_edges("edge_in", "dst", "src", net.edge_in);
      std::vector<std::string> keys;
      for (const Guid& g : net.edge_cascades) keys.push_back(key(g.bytes));
      delete_in("edge_out", "src", keys);
      delete_in("edge_out", "dst", keys);
      delete_in("edge_in", "dst", keys);
      delete_in("edge_in", "src", keys);
    }
    {  // entity_classifications: keyed by tag (tags with the same guid set together)
      std::map<std::string, std::vector<Guid>> by_tag;
      for (const TagRow& r : net.tags) {
        if (r.delete_first) by_tag[r.tag_name].push_back(r.guid);
      }
      std::map<std::vector<Guid>, std::vector<std::string>> groups;
      for (auto& [tag, guids] : by_tag) groups[std::move(guids)].push_back(tag);
      for (const auto& [guids, tags] : groups) {
        std::vector<std::string> t_lits, g_lits;
        for (const auto& t : tags) t_lits.push_back(str(t));
        for (const auto& g : guids) g_lits.push_back(key(g.bytes));
        delete_product("entity_classifications", "tag_name", t_lits, "", "guid", g_lits);
      }
      // Clean-ups, one group per distinct kept set.
      std::map<std::vector<std::string>, std::vector<std::string>> by_keep;
      for (const auto& c : net.tag_cleanups) by_keep[c.keep].push_back(key(c.guid.bytes));
      for (const auto& [keep, guids] : by_keep) {
        std::string tail;
        if (!keep.empty()) {
          tail = " AND `tag_name` NOT IN (";
          for (std::size_t i = 0; i < keep.size(); ++i) {
            if (i) tail.append(", ");
            append_string_literal(tail, keep[i]);
          }
          tail.push_back(')');
        }
        delete_in("entity_classifications", "guid", guids, tail);
      }
    }
  }

  // `qn_digest` IN (…) AND `guid` IN (…): deletes every listed digest that maps to any listed
  // guid. In a store this tool maintains, a by_qn row maps to a guid only from that entity's
  // current digest, so the cross product removes nothing beyond the listed pairs.
  void guarded(const std::vector<std::pair<QnDigest, Guid>>& pairs) {
    const std::size_t max_rows = std::max<std::size_t>(options_.batch_rows, 1);
    const std::size_t per_key = key(Guid{}.bytes).size() + 2;
    const std::string head = "DELETE FROM " + table("entity_by_qn") + " WHERE `qn_digest` IN (";
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
      for (std::size_t k = 0; k < ds.size(); ++k) {
        if (k) sql.append(", ");
        append_key(sql, ds[k], enc_);
      }
      sql.append(") AND `guid` IN (");
      for (std::size_t k = 0; k < gs.size(); ++k) {
        if (k) sql.append(", ");
        append_key(sql, gs[k].bytes, enc_);
      }
      sql.push_back(')');
      w_.deletes.push_back(Statement{"entity_by_qn", std::move(sql), j - i});
      i = j;
    }
  }

  // `guid` IN (…) AND `qn_digest` NOT IN (kept digests of those guids). Keeping the union is
  // exact: a digest some listed guid keeps has a pending upsert (or a keyed delete) in this
  // window that decides its final state whatever the delete phase does to it.
  void by_qn_cleanups(const std::vector<CleanUp<QnDigest>>& cleanups) {
    const std::size_t max_rows = std::max<std::size_t>(options_.batch_rows, 1);
    const std::size_t per_key = key(Guid{}.bytes).size() + 2;
    const std::string head = "DELETE FROM " + table("entity_by_qn") + " WHERE `guid` IN (";
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
        for (std::size_t k = 0; k < keep.size(); ++k) {
          if (k) sql.append(", ");
          append_key(sql, keep[k], enc_);
        }
        sql.push_back(')');
      }
      w_.deletes.push_back(Statement{"entity_by_qn", std::move(sql), j - i});
      i = j;
    }
  }

  std::string upsert_head(std::string_view name, std::initializer_list<std::string_view> cols) {
    std::string head = "UPSERT INTO " + table(name) + " (";
    bool first = true;
    for (std::string_view c : cols) {
      if (!first) head.append(", ");
      first = false;
      append_identifier(head, c);
    }
    head.append(") VALUES\n");
    return head;
  }

  void upserts(const NetWindow& net) {
    flat_upserts(net.flat);
    {
      Batcher b(w_.upserts, "entity_by_qn",
                upsert_head("entity_by_qn", {"qn_digest", "guid", "type_name"}), ",\n", "", options_);
      for (const ByQnRow& r : net.by_qn) {
        if (!r.upsert) continue;
        b.add([&](std::string& s) {
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
    edge_upserts("edge_out", {"src", "elabel", "dst", "dst_type"}, net.edge_out);
    edge_upserts("edge_in", {"dst", "elabel", "src", "src_type"}, net.edge_in);
    {
      Batcher b(w_.upserts, "entity_classifications",
                upsert_head("entity_classifications", {"tag_name", "guid", "propagated",
                                                       "source_guid", "attrs_json", "updated_ts"}),
                ",\n", "", options_);
      for (const TagRow& r : net.tags) {
        if (!r.upsert) continue;
        b.add([&](std::string& s) {
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
      Batcher b(w_.upserts, "entity_audit",
                upsert_head("entity_audit", {"guid", "event_ts", "seq", "op", "type_name",
                                             "qualified_name", "detail_json"}),
                ",\n", "", options_);
      for (const AuditRow& r : net.audit) {
        b.add([&](std::string& s) {
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
  }

  void edge_upserts(std::string_view name, std::initializer_list<std::string_view> cols,
                    const std::vector<EdgeRow>& rows) {
    Batcher b(w_.upserts, name, upsert_head(name, cols), ",\n", "", options_);
    for (const EdgeRow& r : rows) {
      if (!r.upsert) continue;
      b.add([&](std::string& s) {
        s.push_back('(');
        append_key(s, r.a.bytes, enc_);
        s.append(", ");
        append_string_literal(s, r.elabel);
        s.append(", ");
        append_key(s, r.b.bytes, enc_);
        s.append(", ");
        append_string_literal(s, r.b_type);
        s.push_back(')');
      });
    }
    b.flush();
  }

  // entity_flat rows grouped by column set. A row re-created after a delete lists every column.
  void flat_upserts(const std::vector<FlatRow>& rows) {
    static constexpr std::pair<FlatRow::Column, std::string_view> kColumns[] = {
        {FlatRow::kTypeName, "type_name"},   {FlatRow::kQualifiedName, "qualified_name"},
        {FlatRow::kName, "name"},            {FlatRow::kState, "state"},
        {FlatRow::kCreatedTs, "created_ts"}, {FlatRow::kUpdatedTs, "updated_ts"},
        {FlatRow::kPropsJson, "props_json"},
    };
    std::map<std::uint8_t, std::vector<const FlatRow*>> groups;
    for (const FlatRow& r : rows) {
      if (!r.upsert) continue;
      groups[r.delete_first ? std::uint8_t{FlatRow::kAll} : r.mask].push_back(&r);
    }
    for (const auto& [mask, group] : groups) {
      std::string head = "UPSERT INTO " + table("entity_flat") + " (`guid`";
      for (const auto& [bit, col] : kColumns) {
        if (!(mask & bit)) continue;
        head.append(", ");
        append_identifier(head, col);
      }
      head.append(") VALUES\n");
      Batcher b(w_.upserts, "entity_flat", head, ",\n", "", options_);
      for (const FlatRow* r : group) {
        b.add([&](std::string& s) {
          s.push_back('(');
          append_key(s, r->guid.bytes, enc_);
          for (const auto& [bit, col] : kColumns) {
            if (!(mask & bit)) continue;
            s.append(", ");
            if (!(r->mask & bit)) {
              s.append("NULL");
              continue;
            }
            switch (bit) {
              case FlatRow::kTypeName: append_string_literal(s, r->type_name); break;
              case FlatRow::kQualifiedName: append_string_literal(s, r->qualified_name); break;
              case FlatRow::kName: append_string_literal(s, r->name); break;
              case FlatRow::kState:
                append_string_literal(s, r->state_deleted ? "DELETED" : "ACTIVE");
                break;
              case FlatRow::kCreatedTs: append_int(s, r->created_ts); break;
              case FlatRow::kUpdatedTs: append_int(s, r->updated_ts); break;
              case FlatRow::kPropsJson: append_string_literal(s, r->props_json); break;
              default: break;
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
};

}  // namespace

void plan_window(NetWindow& net, const CompileOptions& options, CompiledWindow& window) {
  Planner(options, window).run(net);
}

}  // namespace atlas2kudu
