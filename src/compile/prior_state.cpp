#include "atlas2kudu/prior_state.h"

namespace atlas2kudu {

std::string NoPriorState::describe() const {
  return "none (only what this input establishes; renames and tag removals use predicate "
         "deletes, props of entities first seen here merge from {}, and a type change of one "
         "without its qualifiedName drops its entity_by_qn row)";
}

void PriorState::lookup_in_batches(std::span<const Guid> guids,
                                   const std::function<void(std::vector<PriorEntity>&)>& each) {
  std::vector<PriorEntity> found;
  lookup(guids, found);
  each(found);
}

void NoPriorState::lookup(std::span<const Guid>, std::vector<PriorEntity>&) {}

}  // namespace atlas2kudu
