#include "compile/fold.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "util/digest.h"
#include "util/json_writer.h"
#include "util/key16_index.h"
#include "util/keyed_hash.h"

namespace atlas2kudu {

namespace {

// Guids and qn digests -> a row or slot number, for one window.
constexpr std::uint32_t kNoRow = 0xFFFFFFFF;
using RowIndex = Key16Index<std::uint32_t, kNoRow>;

struct TagKey {
  Guid guid;
  std::string tag;
  friend bool operator==(const TagKey&, const TagKey&) = default;
};
struct TagKeyHash {
  std::size_t operator()(const TagKey& k) const noexcept {
    return SipHasher(process_hash_key())
        .update(k.guid.bytes.data(), k.guid.bytes.size())
        .update(k.tag)
        .finish();
  }
};

using Cell = EntityKnowledge::Cell;

// keep = keep ∩ other, both sorted; in place.
template <typename T>
void intersect_into(std::vector<T>& keep, std::span<const T> other) {
  auto out = keep.begin();
  auto o = other.begin();
  for (auto k = keep.begin(); k != keep.end(); ++k) {
    while (o != other.end() && *o < *k) ++o;
    if (o != other.end() && !(*k < *o)) *out++ = std::move(*k);
  }
  keep.erase(out, keep.end());
}

// The distinct tags of a classification event, one entry per type name, in the order of their
// first entries. Atlas lists an entity's direct and propagated tags together, so a type name the
// entity carries both ways, or from two sources, comes twice: the direct entry is the one kept
// (the entity carries the tag itself, whatever else propagates it), else the one propagated from
// the smallest source guid, so that the row does not depend on the order of the list. For E:
//   [PII from G {"y":1}, PII on E {"x":1}, Sensitive from G, Sensitive from F]
//     -> [PII on E {"x":1}, Sensitive from F]       (F < G)
std::vector<const Classification*> distinct_tags(const Event& e) {
  std::vector<const Classification*> out;
  out.reserve(e.classifications.size());
  const auto keep = [&](const Classification*& kept, const Classification& c) {
    if (kept->entity_guid == e.guid) return;
    if (c.entity_guid == e.guid || c.entity_guid < kept->entity_guid) kept = &c;
  };
  // A handful of tags is the rule: compare directly. A long list (an input can carry 100,000)
  // goes through a hash map, so the fold stays linear in the number of tags.
  constexpr std::size_t kScanLimit = 16;
  if (e.classifications.size() <= kScanLimit) {
    for (const Classification& c : e.classifications) {
      const auto seen = std::find_if(out.begin(), out.end(), [&](const Classification* o) {
        return o->type_name == c.type_name;
      });
      if (seen == out.end()) {
        out.push_back(&c);
      } else {
        keep(*seen, c);
      }
    }
    return out;
  }
  std::unordered_map<std::string_view, std::size_t, KeyedStringHash> seen;
  seen.reserve(e.classifications.size());
  for (const Classification& c : e.classifications) {
    const auto [at, added] = seen.try_emplace(c.type_name, out.size());
    if (added) {
      out.push_back(&c);
    } else {
      keep(out[at->second], c);
    }
  }
  return out;
}

}  // namespace

// The per-window fold state: pending rows with their indexes.
class Folder::Window {
  // Per guid touched in the window: its entity_flat row and the heads of singly linked lists
  // (through links_) of the rows a predicate delete on that guid must look at. One hash lookup
  // per guid and no per-guid allocations, since windows touch many guids.
  static constexpr std::uint32_t kNone = kNoRow;
  struct Slot {
    std::uint32_t flat = kNone;
    std::uint32_t by_qn = kNone;  // by_qn rows upserted with this guid (may map elsewhere now)
    std::uint32_t out_a = kNone, out_b = kNone;  // edge_out rows with src / dst = guid
    std::uint32_t in_a = kNone, in_b = kNone;    // edge_in rows with dst / src = guid
    std::uint32_t tags = kNone;
    EntityKnowledge* knowledge = nullptr;  // in the store, once the window touched it
    std::uint32_t by_qn_cleanup = kNone;   // index in net_.by_qn_cleanups
    std::uint32_t tag_cleanup = kNone;     // index in net_.tag_cleanups
  };
  struct Link {
    std::uint32_t row;
    std::uint32_t next;
  };

 public:
  Window(const CompileOptions& options, KnowledgeStore& knowledge, NetWindow& net,
         std::size_t events)
      : options_(options),
        knowledge_(knowledge),
        net_(net),
        slot_index_(events),
        by_qn_index_(events) {
    // Most events touch one flat row and one audit row; reserving avoids rehashing mid-window.
    slots_.reserve(events);
    net_.flat.reserve(events);
    net_.audit.reserve(events);
  }

  void apply(const Event& e) {
    switch (e.op) {
      case Operation::kEntityCreate:
        entity_upsert(e, true);
        break;
      case Operation::kEntityUpdate:
        entity_upsert(e, false);
        break;
      case Operation::kEntityDelete:
        entity_delete(e);
        break;
      case Operation::kClassificationAdd:
      case Operation::kClassificationUpdate:
      case Operation::kClassificationDelete:
        // event.h: header_deleted. Under --tombstone hard the entity has no rows left to tag.
        if (!e.header_deleted) entity_upsert(e, false);
        if (!e.header_deleted || options_.tombstone == Tombstone::kSoft) classifications(e);
        break;
      case Operation::kRelationshipCreate:
        relationship(e, false);
        break;
      case Operation::kRelationshipUpdate:
        relationship(e, e.relationship.status_deleted);
        break;
      case Operation::kRelationshipDelete:
        relationship(e, true);
        break;
    }
    if (is_entity_op(e.op) || is_classification_op(e.op)) audit(e);
  }

  void finish() { net_.edge_cascades.assign(edge_cascades_.begin(), edge_cascades_.end()); }

  // What the window holds so far beyond its events, estimated from what it folded
  // (Folder::held_bytes).
  std::size_t held_bytes() const { return held_; }

 private:
  // --- entity_flat and entity_by_qn ---

  void entity_upsert(const Event& e, bool create) {
    EntityKnowledge& k = knowledge(e.guid);
    FlatRow& f = flat(e.guid);
    f.upsert = true;
    f.type_name = e.type_name;
    f.state_deleted = false;
    f.updated_ts = e.event_time_us;
    f.mask |= FlatRow::kTypeName | FlatRow::kState | FlatRow::kUpdatedTs;
    if (e.qualified_name) {
      f.qualified_name = *e.qualified_name;
      f.mask |= FlatRow::kQualifiedName;
    }
    if (e.name) {
      f.name = *e.name;
      f.mask |= FlatRow::kName;
    }
    if (create) {
      f.created_ts = e.event_time_us;
      f.mask |= FlatRow::kCreatedTs;
    }
    // Without a known merge base and nothing to merge, leave the stored cell alone (exact when
    // the row exists; NULL reads as {} when it does not).
    if (k.props_known || !e.attributes.empty()) {
      if (!k.props_known) {
        k.props = Props{};
        k.props_known = true;
      }
      merge_attributes(k.props, e.attributes, options_.props_max_bytes);
      const std::size_t before = f.props_json.size();
      f.props_json.assign(k.props.json());
      // The cell is in the row, in the knowledge, in the statement and in its printed or sent
      // copy: an update of one attribute of a large entity holds the whole merged cell four times.
      if (f.props_json.size() > before) hold(4 * (f.props_json.size() - before));
      f.mask |= FlatRow::kPropsJson;
    }

    // entity_by_qn: the current digest; a type change without a qualifiedName re-keys with the
    // stored one when it is known.
    const std::string* qn = nullptr;
    if (e.qualified_name) {
      qn = &*e.qualified_name;
    } else if (k.type_state == Cell::kValue && k.type_name != e.type_name &&
               k.qn_state == Cell::kValue) {
      qn = &k.qualified_name;
    }
    if (qn) {
      // Most events of a known entity repeat its (type, qualifiedName): reuse the digest.
      const bool unchanged = k.digest_valid && k.type_state == Cell::kValue &&
                             k.qn_state == Cell::kValue && k.type_name == e.type_name &&
                             k.qualified_name == *qn;
      const QnDigest digest = unchanged ? k.digest : qn_digest(e.type_name, *qn);
      if (k.qn_state == Cell::kValue && k.type_state == Cell::kValue) {
        const QnDigest old = stored_digest(k);
        if (old != digest) by_qn_guarded_delete(old, e.guid);
      } else if (k.qn_state != Cell::kNull) {
        by_qn_cleanup(e.guid, std::span<const QnDigest>(&digest, 1));
      }
      ByQnRow& r = by_qn(digest);
      r.upsert = true;
      r.guid = e.guid;
      r.type_name = e.type_name;
      link(slots_[slot(e.guid)].by_qn, index_of(net_.by_qn, r));
      if (qn != &k.qualified_name) k.qualified_name = *qn;
      k.qn_state = Cell::kValue;
      k.digest = digest;  // of (e.type_name, qn): the state after this event
      k.digest_valid = true;
    } else if (k.type_state != Cell::kValue || k.type_name != e.type_name) {
      k.digest_valid = false;
      if (k.type_state == Cell::kValue && k.qn_state == Cell::kUnknown) {
        // A type change whose qualifiedName nobody told us: the row under the old type is stale
        // and cannot be re-keyed, so drop it rather than leave a wrong mapping.
        by_qn_cleanup(e.guid, {});
      } else if (k.type_state == Cell::kUnknown && k.qn_state != Cell::kNull) {
        // The stored type is unknown too: whether it changed is not known, but a row of this guid
        // under another type would be stale, so drop those (none, if the type did not change).
        by_qn_type_cleanup(e.guid, e.type_name);
      }
    }
    k.type_state = Cell::kValue;
    k.type_name = e.type_name;
  }

  void entity_delete(const Event& e) {
    EntityKnowledge& k = knowledge(e.guid);
    FlatRow& f = flat(e.guid);
    const bool hard = options_.tombstone == Tombstone::kHard;
    if (hard) {
      keyed_delete(f);
      f.mask = 0;
    } else {
      // Soft: state and updated_ts only; props and names stay (the delete header is not merged).
      f.upsert = true;
      f.state_deleted = true;
      f.updated_ts = e.event_time_us;
      f.mask |= FlatRow::kState | FlatRow::kUpdatedTs;
    }
    // The by_qn row, only where it maps to this guid.
    if (k.qn_state == Cell::kValue && k.type_state == Cell::kValue) {
      by_qn_guarded_delete(stored_digest(k), e.guid);
    } else if (k.qn_state != Cell::kNull) {
      by_qn_cleanup(e.guid, {});
    }
    edge_cascade(e.guid);
    if (hard) {
      if (k.tags_known) {
        for (const std::string& t : k.tags) keyed_delete(tag(e.guid, t));
      } else {
        tag_cleanup(e.guid, {});
      }
      k.type_state = Cell::kNull;
      k.type_name.clear();
      k.qn_state = Cell::kNull;
      k.qualified_name.clear();
      k.digest_valid = false;
      k.props_known = true;
      k.props = Props{};
      k.tags_known = true;
      k.tags.clear();
    }
  }

  // The digest of the stored (type_name, qualified_name); both must be known values.
  static const QnDigest& stored_digest(EntityKnowledge& k) {
    if (!k.digest_valid) {
      k.digest = qn_digest(k.type_name, k.qualified_name);
      k.digest_valid = true;
    }
    return k.digest;
  }

  FlatRow& flat(const Guid& guid) {
    std::uint32_t& index = slots_[slot(guid)].flat;
    if (index == kNone) {
      index = static_cast<std::uint32_t>(net_.flat.size());
      net_.flat.emplace_back();
      net_.flat.back().guid = guid;
      hold(kFlatRowBytes);
    }
    return net_.flat[index];
  }

  ByQnRow& by_qn(const QnDigest& digest) {
    bool inserted = false;
    const std::uint32_t index = by_qn_index_.try_emplace(
        digest.data(), static_cast<std::uint32_t>(net_.by_qn.size()), inserted);
    if (inserted) {
      net_.by_qn.emplace_back();
      net_.by_qn.back().digest = digest;
      hold(kByQnRowBytes);
    }
    return net_.by_qn[index];
  }

  // Delete `digest` where it maps to `guid`.
  void by_qn_guarded_delete(const QnDigest& digest, const Guid& guid) {
    const std::uint32_t index = by_qn_index_.find(digest.data());
    if (index != kNoRow) {
      ByQnRow& r = net_.by_qn[index];
      if (r.upsert && r.guid == guid) keyed_delete(r);
    }
    net_.by_qn_guarded.emplace_back(digest, guid);
    hold(kDeleteKeyBytes);
  }

  // Delete every by_qn row mapping to `guid` except `keep`.
  void by_qn_cleanup(const Guid& guid, std::span<const QnDigest> keep = {}) {
    for_each_linked(slots_[slot(guid)].by_qn, [&](std::uint32_t i) {
      ByQnRow& r = net_.by_qn[i];
      if (r.upsert && r.guid == guid &&
          std::find(keep.begin(), keep.end(), r.digest) == keep.end()) {
        keyed_delete(r);
      }
    });
    cleanup(net_.by_qn_cleanups, &Slot::by_qn_cleanup, guid, keep);
  }

  // Delete every by_qn row mapping to `guid` under another type than `type_name`.
  void by_qn_type_cleanup(const Guid& guid, std::string_view type_name) {
    for_each_linked(slots_[slot(guid)].by_qn, [&](std::uint32_t i) {
      ByQnRow& r = net_.by_qn[i];
      if (r.upsert && r.guid == guid && r.type_name != type_name) keyed_delete(r);
    });
    net_.by_qn_type_cleanups.emplace_back(guid, type_name);
    hold(kDeleteKeyBytes + 2 * type_name.size());
  }

  // --- edges ---

  void relationship(const Event& e, bool is_delete) {
    const Relationship& r = e.relationship;
    const std::string& label = r.edge_label();
    EdgeRow& out = edge(net_.edge_out, edge_out_index_, &Slot::out_a, &Slot::out_b, r.end1.guid,
                        label, r.end2.guid);
    EdgeRow& in = edge(net_.edge_in, edge_in_index_, &Slot::in_a, &Slot::in_b, r.end2.guid, label,
                       r.end1.guid);
    if (is_delete) {
      keyed_delete(out);
      keyed_delete(in);
    } else {
      out.upsert = true;
      out.b_type = r.end2.type_name;
      in.upsert = true;
      in.b_type = r.end1.type_name;
    }
  }

  using EdgeIndex = std::unordered_map<EdgeKey, std::size_t, EdgeKeyHash>;

  EdgeRow& edge(std::vector<EdgeRow>& rows, EdgeIndex& index, std::uint32_t Slot::*by_a,
                std::uint32_t Slot::*by_b, const Guid& a, std::string_view label, const Guid& b) {
    auto [it, inserted] = index.try_emplace(EdgeKey{a, b, label}, rows.size());
    if (inserted) {
      rows.emplace_back();
      rows.back().a = a;
      rows.back().elabel = label;
      rows.back().b = b;
      hold(kEdgeRowBytes + 2 * label.size());
      const auto row = static_cast<std::uint32_t>(it->second);
      link(slots_[slot(a)].*by_a, row);
      link(slots_[slot(b)].*by_b, row);
    }
    return rows[it->second];
  }

  void edge_cascade(const Guid& guid) {
    const Slot& s = slots_[slot(guid)];
    const auto cancel = [](std::vector<EdgeRow>& rows) {
      return [&rows](std::uint32_t i) {
        if (rows[i].upsert) keyed_delete(rows[i]);
      };
    };
    for_each_linked(s.out_a, cancel(net_.edge_out));
    for_each_linked(s.out_b, cancel(net_.edge_out));
    for_each_linked(s.in_a, cancel(net_.edge_in));
    for_each_linked(s.in_b, cancel(net_.edge_in));
    edge_cascades_.push_back(guid);
    hold(kDeleteKeyBytes);
  }

  // --- entity_classifications ---

  void classifications(const Event& e) {
    EntityKnowledge& k = knowledge(e.guid);
    const std::vector<const Classification*> set = distinct_tags(e);
    std::vector<std::string> names;
    names.reserve(set.size());
    for (const Classification* c : set) names.push_back(c->type_name);
    std::sort(names.begin(), names.end());
    if (k.tags_known) {
      for (const std::string& old : k.tags) {
        if (!std::binary_search(names.begin(), names.end(), old)) keyed_delete(tag(e.guid, old));
      }
    } else {
      tag_cleanup(e.guid, names);
    }
    for (const Classification* c : set) {
      TagRow& r = tag(e.guid, c->type_name);
      r.upsert = true;
      r.propagated = c->entity_guid != e.guid;
      r.source_guid = c->entity_guid;
      if (c->attributes_json.size() > r.attrs_json.size()) {
        hold(3 * (c->attributes_json.size() - r.attrs_json.size()));
      }
      r.attrs_json = c->attributes_json;
      r.updated_ts = e.event_time_us;
    }
    k.tags_known = true;
    k.tags = std::move(names);
  }

  TagRow& tag(const Guid& guid, const std::string& name) {
    auto [it, inserted] = tag_index_.try_emplace(TagKey{guid, name}, net_.tags.size());
    if (inserted) {
      net_.tags.emplace_back();
      net_.tags.back().guid = guid;
      net_.tags.back().tag_name = name;
      // The name is in the row, its index key, the knowledge, the statement and its copy.
      hold(kTagRowBytes + 5 * name.size());
      link(slots_[slot(guid)].tags, static_cast<std::uint32_t>(it->second));
    }
    return net_.tags[it->second];
  }

  void tag_cleanup(const Guid& guid, std::span<const std::string> keep = {}) {
    for_each_linked(slots_[slot(guid)].tags, [&](std::uint32_t i) {
      TagRow& r = net_.tags[i];
      if (r.upsert && !std::binary_search(keep.begin(), keep.end(), r.tag_name)) keyed_delete(r);
    });
    cleanup(net_.tag_cleanups, &Slot::tag_cleanup, guid, keep);
  }

  // --- entity_audit ---

  void audit(const Event& e) {
    // Appended in event order; the planner keeps the last row per key (a redelivered message
    // has the same key and the same content).
    AuditRow& a = net_.audit.emplace_back();
    a.guid = e.guid;
    a.event_ts = e.event_time_us;
    a.seq = e.audit_seq;
    a.op = e.op;
    a.type_name = e.type_name;
    a.qualified_name = e.qualified_name;
    a.detail_json = audit_detail_json(e, options_.props_max_bytes);
    hold(kAuditRowBytes + 3 * a.detail_json.size());
  }

  // --- helpers ---

  // Records the predicate clean-up "rows of `guid` except `keep`"; a second one for the same guid
  // keeps only what both keep.
  template <typename T>
  void cleanup(std::vector<CleanUp<T>>& cleanups, std::uint32_t Slot::*index, const Guid& guid,
               std::span<const T> keep) {
    std::uint32_t& i = slots_[slot(guid)].*index;
    if (i == kNone) {
      i = static_cast<std::uint32_t>(cleanups.size());
      cleanups.push_back(CleanUp<T>{guid, std::vector<T>(keep.begin(), keep.end())});
      hold(kDeleteKeyBytes + sizeof(T) * keep.size());
    } else {
      intersect_into(cleanups[i].keep, keep);
    }
  }

  // What is known about `guid`, updated in place in the store (valid until its end_window()).
  EntityKnowledge& knowledge(const Guid& guid) {
    EntityKnowledge*& k = slots_[slot(guid)].knowledge;
    if (k == nullptr) k = &knowledge_.get(guid);
    return *k;
  }

  static void keyed_delete(RowOp& r) {
    r.delete_first = true;
    r.upsert = false;
  }
  static void keyed_delete(FlatRow& r) {
    r.delete_first = true;
    r.upsert = false;
    r.mask = 0;
  }

  template <typename Row>
  static std::size_t index_of(const std::vector<Row>& rows, const Row& r) {
    return static_cast<std::size_t>(&r - rows.data());
  }

  // What each row makes the window hold, besides the text counted where it is set: the row
  // itself, its index entries and links, and the keys, timestamps and punctuation of its
  // statement text twice (the statement and its printed or sent copy). Deterministic (the same
  // input folds to the same figure), so that where a window is split never depends on the
  // allocator. Measured against the heap a window of one kind of row holds (bench/RESULTS.md
  // part thirty-two): within 10% for the benchmark's export and for events of two or forty tags;
  // events that merge large cells hold about 1.4 times what props counted four times says.
  static constexpr std::size_t kSlotBytes = 128;
  static constexpr std::size_t kFlatRowBytes = 448;
  static constexpr std::size_t kByQnRowBytes = 352;
  static constexpr std::size_t kEdgeRowBytes = 448;
  static constexpr std::size_t kTagRowBytes = 480;
  static constexpr std::size_t kAuditRowBytes = 400;
  static constexpr std::size_t kDeleteKeyBytes = 96;

  void hold(std::size_t bytes) { held_ += bytes; }

  const CompileOptions& options_;
  KnowledgeStore& knowledge_;
  NetWindow& net_;
  std::size_t held_ = 0;
  std::uint32_t slot(const Guid& guid) {
    // An event asks for its entity's slot several times (knowledge, flat row, by_qn link, audit).
    if (last_slot_ != kNone && last_slot_guid_ == guid) return last_slot_;
    bool inserted = false;
    const std::uint32_t index = slot_index_.try_emplace(
        guid.bytes.data(), static_cast<std::uint32_t>(slots_.size()), inserted);
    if (inserted) {
      slots_.emplace_back();
      hold(kSlotBytes);
    }
    last_slot_guid_ = guid;
    last_slot_ = index;
    return index;
  }
  void link(std::uint32_t& head, std::uint32_t row) {
    links_.push_back(Link{row, head});
    head = static_cast<std::uint32_t>(links_.size() - 1);
  }
  template <typename F>
  void for_each_linked(std::uint32_t head, F&& f) {
    for (std::uint32_t h = head; h != kNone; h = links_[h].next) f(links_[h].row);
  }

  RowIndex slot_index_;
  std::vector<Slot> slots_;
  Guid last_slot_guid_;
  std::uint32_t last_slot_ = kNone;
  std::vector<Link> links_;
  RowIndex by_qn_index_;
  EdgeIndex edge_out_index_, edge_in_index_;
  std::unordered_map<TagKey, std::size_t, TagKeyHash> tag_index_;
  std::vector<Guid> edge_cascades_;
};

Folder::Folder(const CompileOptions& options) : options_(options), knowledge_(options_) {}

std::vector<Guid> Folder::unknown_entities(std::span<const Event> events) const {
  std::vector<Guid> unknown;
  for (const Event& e : events) {
    if (is_relationship_op(e.op)) continue;
    if (!knowledge_.contains(e.guid)) unknown.push_back(e.guid);
  }
  std::sort(unknown.begin(), unknown.end());
  unknown.erase(std::unique(unknown.begin(), unknown.end()), unknown.end());
  return unknown;
}

void Folder::learn(std::span<const PriorEntity> found) {
  for (const PriorEntity& p : found) {
    EntityKnowledge k;
    const auto cell = [&](const std::optional<std::string>& v, std::string& out) {
      if (!p.exists || !v) return Cell::kNull;
      out = *v;
      return Cell::kValue;
    };
    k.type_state = cell(p.type_name, k.type_name);
    k.qn_state = cell(p.qualified_name, k.qualified_name);
    k.props_known = true;
    if (p.exists && p.props_json) {
      if (auto props = parse_props(*p.props_json)) {
        k.props = std::move(*props);
      } else if (unreadable_props_.cells++ == 0) {
        unreadable_props_.first = p.guid;
      }
    }
    k.tags_known = true;
    k.tags = p.tags;
    std::sort(k.tags.begin(), k.tags.end());
    k.tags.erase(std::unique(k.tags.begin(), k.tags.end()), k.tags.end());
    knowledge_.learn(p.guid, std::move(k));
  }
  knowledge_.make_room();
}

void Folder::write_knowledge_snapshot(std::span<const Event> events,
                                      const std::function<void(std::string_view)>& out) {
  std::vector<Guid> guids;
  guids.reserve(events.size());
  for (const Event& e : events) {
    if (!is_relationship_op(e.op)) guids.push_back(e.guid);
  }
  std::sort(guids.begin(), guids.end());
  guids.erase(std::unique(guids.begin(), guids.end()), guids.end());
  std::string entry;
  EntityKnowledge k;
  for (const Guid& g : guids) {
    if (!knowledge_.load(g, k)) continue;
    entry.clear();
    append_snapshot_entry(entry, g, k);
    out(entry);
  }
}

std::string Folder::knowledge_snapshot(std::span<const Event> events) {
  std::string out;
  write_knowledge_snapshot(events, [&](std::string_view entry) { out += entry; });
  return out;
}

void Folder::assume(std::shared_ptr<const SnapshotFile> snapshot) {
  knowledge_.assume(std::move(snapshot));
}

Folder::~Folder() = default;

void Folder::begin_window(NetWindow& net, std::size_t expected_events) {
  window_ = std::make_unique<Window>(options_, knowledge_, net, expected_events);
}

void Folder::add(const Event& event) {
  window_->apply(event);
}

void Folder::end_window(bool window_ends) {
  window_->finish();
  window_.reset();
  knowledge_.end_window(window_ends);
}

std::size_t Folder::held_bytes() const {
  // Knowledge over the store's budget counts 5/4 of its footprint: WindowParts ends a part at 5/4
  // of the window's share, an allowance for the rows' figure (which counts their text four times,
  // more than they hold); the footprint has none to spare. 6,000 updates of entities with 40 KB
  // of tags, counted at their footprint: 276 MB at the default budget; at 5/4, 258 MB.
  const std::size_t over = knowledge_.bytes_over_budget();
  return (window_ ? window_->held_bytes() : 0) + over + over / 4;
}

void Folder::fold(std::span<const Event> events, NetWindow& net) {
  begin_window(net, events.size());
  for (const Event& e : events) add(e);
  end_window();
}

namespace {

std::string build_audit_detail_json(const Event& e, std::size_t max_bytes) {
  // Called for every entity and classification event: the name lists reuse their memory.
  thread_local std::vector<std::string_view> attrs, tags;
  attrs.clear();
  tags.clear();
  for (const Attribute& a : e.attributes) attrs.push_back(a.name);
  if (e.qualified_name) attrs.push_back("qualifiedName");
  if (e.name) attrs.push_back("name");
  std::sort(attrs.begin(), attrs.end());
  attrs.erase(std::unique(attrs.begin(), attrs.end()), attrs.end());
  const bool with_tags = is_classification_op(e.op);
  if (with_tags) {
    for (const Classification& c : e.classifications) tags.push_back(c.type_name);
    std::sort(tags.begin(), tags.end());
    tags.erase(std::unique(tags.begin(), tags.end()), tags.end());
  }
  std::string out;
  out.reserve(32 + 24 * (attrs.size() + tags.size()));
  JsonWriter w(out);
  const auto list = [&w](std::string_view key, const std::vector<std::string_view>& names) {
    w.key(key).begin_array();
    for (std::string_view name : names) w.value(name);
    w.end_array();
  };
  w.begin_object();
  list("attributes", attrs);
  if (with_tags) list("classifications", tags);
  w.end_object();
  if (out.size() <= max_bytes) return out;
  // Too long to list: say how many there were.
  out.clear();
  JsonWriter counts(out);
  counts.begin_object().key("_truncated").value(true).key("attributes").value(attrs.size());
  if (with_tags) counts.key("classifications").value(tags.size());
  counts.end_object();
  if (out.size() <= max_bytes) return out;
  return "{}";
}

}  // namespace

std::string audit_detail_json(const Event& e, std::size_t max_bytes) {
  // Events of one type carry the same attribute names, in the same order: the detail is looked
  // up by everything it depends on (the names in event order, which of name/qualifiedName were
  // given, the tag names of a classification event, the cap) instead of sorted and written
  // again. A few dozen entity types make up an export: the last kEntries distinct lists are
  // kept, compared directly (cheaper than hashing the key), and replaced in turn.
  constexpr std::size_t kEntries = 32;
  struct Cache {
    std::array<std::pair<std::string, std::string>, kEntries> details;  // (key, detail)
    std::size_t next = 0;                                               // the entry replaced next
    std::string key;
    std::size_t max_bytes = 0;
  };
  thread_local Cache cache;
  constexpr std::size_t kMaxKeyBytes = 4096;
  std::string& key = cache.key;
  key.clear();
  const bool with_tags = is_classification_op(e.op);
  // Length-prefixed, so that no two lists of names (which may hold any byte) share a key.
  const auto put_count = [&key](std::size_t n) {
    const auto n32 = static_cast<std::uint32_t>(n);
    key.append(reinterpret_cast<const char*>(&n32), sizeof n32);
  };
  const auto put_name = [&](std::string_view name) {
    put_count(name.size());
    key.append(name);
    return key.size() <= kMaxKeyBytes;
  };
  key.push_back(
      static_cast<char>((with_tags ? 4 : 0) + (e.qualified_name ? 2 : 0) + (e.name ? 1 : 0)));
  put_count(e.attributes.size());
  for (const Attribute& a : e.attributes) {
    if (!put_name(a.name)) return build_audit_detail_json(e, max_bytes);
  }
  if (with_tags) {
    for (const Classification& c : e.classifications) {
      if (!put_name(c.type_name)) return build_audit_detail_json(e, max_bytes);
    }
  }
  if (cache.max_bytes != max_bytes) {
    for (auto& [cached_key, detail] : cache.details) cached_key.clear();  // no key is empty
    cache.max_bytes = max_bytes;
  }
  for (const auto& [cached_key, detail] : cache.details) {
    if (cached_key == key) return detail;
  }
  auto& [cached_key, detail] = cache.details[cache.next];
  cache.next = (cache.next + 1) % kEntries;
  cached_key = key;
  detail = build_audit_detail_json(e, max_bytes);
  return detail;
}

}  // namespace atlas2kudu
