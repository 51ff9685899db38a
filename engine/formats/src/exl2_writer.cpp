#include "quire/engine/formats/exl2_writer.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "quire/kernels/cpu/exl2_scale.h"
#include "quire/kernels/cpu/half.h"
#include "writer_support.h"

namespace quire::engine::formats {
namespace {

using kernels::DType;

void check_plan(const std::vector<Exl2GroupSpec>& plan, std::int64_t in_features) {
  if (plan.empty()) throw std::invalid_argument("EXL2 plan without groups");
  std::int64_t rows = 0;
  for (std::size_t g = 0; g < plan.size(); ++g) {
    const int bits = plan[g].bits;
    if (bits < 2 || bits > 8 || bits == 7 || (g > 0 && bits > plan[g - 1].bits)) {
      throw std::invalid_argument("EXL2 plan: group " + std::to_string(g) + " of " +
                                  std::to_string(bits) + " bits");
    }
    if (plan[g].rows <= 0 || plan[g].rows * bits % 32 != 0) {
      throw std::invalid_argument("EXL2 plan: group " + std::to_string(g) + " of " +
                                  std::to_string(plan[g].rows) + " rows does not fill words");
    }
    rows += plan[g].rows;
  }
  if (rows != in_features) {
    throw std::invalid_argument("EXL2 plan covers " + std::to_string(rows) + " of " +
                                std::to_string(in_features) + " inputs");
  }
}

// Sets value j of the group's column n in the bit stream layout.
void pack(Exl2Encoding& out, const kernels::Exl2Group& group, std::int64_t n, int j,
          std::uint32_t value) {
  const int bit = (j % 32) * group.bits;
  const std::int64_t row = group.q_row + std::int64_t(j / 32) * group.bits + bit / 32;
  const int shift = bit % 32;
  out.q_weight[std::size_t(row * out.q_columns + n)] |= value << shift;
  if (shift + group.bits > 32) {
    out.q_weight[std::size_t((row + 1) * out.q_columns + n)] |= value >> (32 - shift);
  }
}

void quantize_group(std::span<const float> weight, std::size_t g, Exl2Encoding& out) {
  const kernels::Exl2Group& group = out.groups[g];
  const std::int64_t in = out.in_features;
  const std::int32_t zero = 1 << (group.bits - 1);
  const std::int32_t max_q = (1 << group.bits) - 1;
  // The scale at which a column's largest magnitude lands half a step inside
  // the range [-zero, zero - 1]: |w| / s <= zero - 1/2.
  std::vector<double> needed(std::size_t(out.out_features));
  for (std::int64_t n = 0; n < out.out_features; ++n) {
    double largest = 0.0;
    for (int j = 0; j < group.rows; ++j) {
      const std::int64_t k = out.perm[std::size_t(group.first_row + j)];
      largest = std::max(largest, std::fabs(double(weight[std::size_t(n * in + k)])));
    }
    needed[std::size_t(n)] = largest / (zero - 0.5);
  }
  const double group_max = *std::max_element(needed.begin(), needed.end());
  // exllamav2 divides q_scale_max by 256 in FP16 (see exl2_scale.h); choosing
  // the quotient first keeps that division exact, even for subnormal quotients.
  const std::uint16_t per_step = detail::half_at_least(static_cast<float>(group_max / 256.0));
  out.q_scale_max[g] = kernels::float_to_half(kernels::half_to_float(per_step) * 256.0f);
  // Exactly the products' arithmetic: fp16(qs^2 * q_scale_max / 256).
  const float max_scale = kernels::half_to_float(out.q_scale_max[g]) * (1.0f / 256.0f);
  const std::uint16_t max_scale_half = out.q_scale_max[g];
  const auto scale_of = [&](int qs) { return kernels::exl2_scale(qs, max_scale_half); };
  std::uint32_t* scale_words = out.q_scale.data() + g * std::size_t(out.q_columns / 8);
  for (std::int64_t n = 0; n < out.q_columns; ++n) {
    const bool padding = n >= out.out_features;
    int qs = 1;
    if (!padding && max_scale > 0.0f) {
      const double ratio = std::sqrt(needed[std::size_t(n)] / (256.0 * double(max_scale)));
      qs = std::clamp(static_cast<int>(std::ceil(16.0 * ratio)), 1, 16);
      while (qs < 16 && double(scale_of(qs)) < needed[std::size_t(n)])
        ++qs;
    }
    scale_words[n / 8] |= std::uint32_t(qs - 1) << (4 * (n % 8));
    const double scale = scale_of(qs);
    for (int j = 0; j < group.rows; ++j) {
      std::int32_t q = zero;
      if (!padding && scale > 0.0) {
        const std::int64_t k = out.perm[std::size_t(group.first_row + j)];
        const double w = weight[std::size_t(n * in + k)];
        q = std::clamp(static_cast<std::int32_t>(std::lround(w / scale)) + zero, 0, max_q);
      }
      pack(out, group, n, j, static_cast<std::uint32_t>(q));
    }
  }
}

}  // namespace

Exl2Tensors Exl2Encoding::views() const {
  const auto groups_count = static_cast<std::int64_t>(q_scale_max.size());
  Exl2Tensors views;
  views.q_weight = {DType::I32,
                    {static_cast<std::int64_t>(q_weight.size()) / q_columns, q_columns},
                    detail::byte_view(q_weight)};
  views.q_invperm = {DType::I32, {in_features}, detail::byte_view(q_invperm)};
  views.q_scale = {DType::I32, {groups_count, q_columns / 8}, detail::byte_view(q_scale)};
  views.q_scale_max = {DType::F16, {groups_count}, detail::byte_view(q_scale_max)};
  views.q_groups = {DType::I16, {2 * groups_count}, detail::byte_view(q_groups)};
  return views;
}

std::vector<NamedTensor> Exl2Encoding::tensors() const {
  const Exl2Tensors v = views();
  const auto named = [](const char* suffix, const TensorView& view) {
    return NamedTensor{suffix, view.dtype, view.shape,
                       std::vector<std::byte>(view.bytes.begin(), view.bytes.end())};
  };
  return {named("q_weight", v.q_weight), named("q_invperm", v.q_invperm),
          named("q_scale", v.q_scale), named("q_scale_max", v.q_scale_max),
          named("q_groups", v.q_groups)};
}

Exl2Encoding quantize_exl2(std::span<const float> weight, std::int64_t out_features,
                           std::int64_t in_features, const Exl2QuantizeOptions& options) {
  detail::check_matrix(weight, out_features, in_features);
  check_plan(options.groups, in_features);
  Exl2Encoding out;
  out.in_features = in_features;
  out.out_features = out_features;
  out.q_columns = (out_features + 31) / 32 * 32;
  int row = 0;
  int q_row = 0;
  for (const Exl2GroupSpec& spec : options.groups) {
    out.groups.push_back({spec.bits, spec.rows, row, q_row});
    out.q_groups.push_back(static_cast<std::uint16_t>(spec.bits));
    out.q_groups.push_back(static_cast<std::uint16_t>(q_row));
    row += spec.rows;
    q_row += spec.rows * spec.bits / 32;
    if (q_row > 0xffff) throw std::invalid_argument("EXL2 layer too tall for 16-bit q_groups");
  }
  out.perm = detail::seeded_permutation(in_features, options.permutation_seed);
  out.q_invperm.resize(out.perm.size());
  for (std::size_t k = 0; k < out.perm.size(); ++k) {
    out.q_invperm[std::size_t(out.perm[k])] = static_cast<std::int32_t>(k);
  }
  out.q_weight.assign(std::size_t(q_row * out.q_columns), 0u);
  out.q_scale.assign(out.groups.size() * std::size_t(out.q_columns / 8), 0u);
  out.q_scale_max.assign(out.groups.size(), 0u);
  for (std::size_t g = 0; g < out.groups.size(); ++g)
    quantize_group(weight, g, out);
  return out;
}

}  // namespace quire::engine::formats
