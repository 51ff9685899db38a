#include "group_index.h"

#include <string>

namespace quire::engine::formats::detail {

using std::to_string;

std::vector<std::int32_t> read_even_group_index(const LayerChecks& checks, std::string_view name,
                                                const TensorView& view, std::int64_t in, int groups,
                                                int group_size) {
  const std::string tensor(name);
  checks.expect(tensor, view, {kernels::DType::I32}, 1);
  if (view.shape[0] != in) {
    checks.fail(tensor + " has " + to_string(view.shape[0]) + " entries for " + to_string(in) +
                " inputs");
  }
  std::vector<std::int32_t> g_idx(static_cast<std::size_t>(in));
  for (std::int64_t k = 0; k < in; ++k) {
    const std::int64_t group = read_index(view, k);
    if (group == -1) return {};
    g_idx[std::size_t(k)] = static_cast<std::int32_t>(group);
  }
  std::vector<std::int64_t> members(static_cast<std::size_t>(groups), 0);
  bool sequential = true;
  for (std::int64_t k = 0; k < in; ++k) {
    const std::int32_t group = g_idx[std::size_t(k)];
    if (group < 0 || group >= groups) {
      checks.fail(tensor + "[" + to_string(k) + "] is " + to_string(group) + ", but there are " +
                  to_string(groups) + " groups");
    }
    ++members[std::size_t(group)];
    sequential = sequential && group == k / group_size;
  }
  for (int g = 0; g < groups; ++g) {
    if (members[std::size_t(g)] != in / groups) {
      checks.fail(tensor + " puts " + to_string(members[std::size_t(g)]) + " inputs in group " +
                  to_string(g) + "; each of the " + to_string(groups) + " groups holds " +
                  to_string(in / groups));
    }
  }
  if (sequential) g_idx.clear();
  return g_idx;
}

}  // namespace quire::engine::formats::detail
