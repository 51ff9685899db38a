#include "quire/engine/formats/exl2_layout.h"

#include <cmath>
#include <string>

#include "host_pointers.h"
#include "quire/kernels/cpu/half.h"
#include "tensor_checks.h"

namespace quire::engine::formats {
namespace {

using kernels::DType;
using std::to_string;

bool legal_width(std::int64_t bits) {
  return bits == 2 || bits == 3 || bits == 4 || bits == 5 || bits == 6 || bits == 8;
}

// N from what the caller knows, else the bias, else the stored columns; it must
// be what the converter padded to C.
std::int64_t output_count(const detail::LayerChecks& checks, const Exl2Tensors& tensors,
                          const LinearShape& shape, std::int64_t columns) {
  std::int64_t outputs = columns;
  if (shape.out_features > 0) {
    outputs = shape.out_features;
  } else if (tensors.bias && tensors.bias->shape.size() == 1) {
    outputs = tensors.bias->shape[0];
  }
  if (outputs <= 0 || outputs > columns || columns - outputs >= 32) {
    const std::string what = "q_weight has " + to_string(columns) + " columns for " +
                             to_string(outputs) +
                             " outputs; the converter pads the outputs to the next multiple of 32";
    if (shape.out_features > 0) checks.fail_config(what);
    checks.fail(what);
  }
  return outputs;
}

// The group table from q_groups: widths in exllamav2's order, rows from the
// q_weight rows between consecutive groups, the last one taking what is left.
std::vector<kernels::Exl2Group> read_groups(const detail::LayerChecks& checks,
                                            const Exl2Tensors& tensors, std::int64_t groups,
                                            std::int64_t inputs) {
  const std::int64_t q_rows = tensors.q_weight.shape[0];
  std::vector<kernels::Exl2Group> table;
  std::int64_t row = 0;
  for (std::int64_t g = 0; g < groups; ++g) {
    const std::int64_t bits = detail::read_index(tensors.q_groups, 2 * g);
    const std::int64_t first = detail::read_index(tensors.q_groups, 2 * g + 1);
    const std::string name = "group " + to_string(g);
    if (!legal_width(bits)) {
      checks.fail(name + " has " + to_string(bits) + " bits; EXL2 uses 2, 3, 4, 5, 6 or 8");
    }
    if (g > 0 && bits > table.back().bits) {
      checks.fail(name + " has " + to_string(bits) + " bits after a group of " +
                  to_string(table.back().bits) +
                  "; exllamav2 orders the groups by decreasing width");
    }
    if (g == 0 && first != 0) {
      checks.fail("group 0 starts at q_weight row " + to_string(first) + " instead of 0");
    }
    const bool last = g + 1 == groups;
    const std::int64_t end = last ? q_rows : detail::read_index(tensors.q_groups, 2 * g + 3);
    if (end <= first || end > q_rows) {
      checks.fail(last ? name + ", the last, starts at q_weight row " + to_string(first) + " of " +
                             to_string(q_rows)
                       : "group " + to_string(g + 1) + " starts at q_weight row " + to_string(end) +
                             ", not between group " + to_string(g) + "'s first row " +
                             to_string(first) + " and the " + to_string(q_rows) +
                             " rows of q_weight");
    }
    std::int64_t rows = 0;
    if (!last) {
      if ((end - first) * 32 % bits != 0) {
        checks.fail(name + " spans " + to_string(end - first) +
                    " q_weight rows, which do not hold a whole number of " + to_string(bits) +
                    "-bit input rows");
      }
      rows = (end - first) * 32 / bits;
    } else {
      rows = inputs - row;
      if (rows <= 0) {
        checks.fail("the groups before the last cover " + to_string(row) +
                    " input rows, but q_invperm has " + to_string(inputs));
      }
      const std::string remaining = "the last group's remaining " + to_string(rows) +
                                    " input rows at " + to_string(bits) + " bits";
      if (rows * bits % 32 != 0) checks.fail(remaining + " do not fill whole 32-bit words");
      if (rows * bits / 32 != end - first) {
        checks.fail(remaining + " fill " + to_string(rows * bits / 32) +
                    " q_weight rows, but q_weight has " + to_string(end - first) +
                    " rows from the group's first row " + to_string(first));
      }
    }
    table.push_back({static_cast<int>(bits), static_cast<int>(rows), static_cast<int>(row),
                     static_cast<int>(first)});
    row += rows;
  }
  return table;
}

// perm = argsort(q_invperm), verifying that q_invperm is a permutation.
std::vector<std::int32_t> read_permutation(const detail::LayerChecks& checks,
                                           const TensorView& invperm) {
  const std::int64_t inputs = invperm.shape[0];
  std::vector<std::int32_t> perm(std::size_t(inputs), -1);
  for (std::int64_t input = 0; input < inputs; ++input) {
    const std::int64_t position = detail::read_index(invperm, input);
    if (position < 0 || position >= inputs) {
      checks.fail("q_invperm[" + to_string(input) + "] is " + to_string(position) +
                  ", outside 0.." + to_string(inputs - 1));
    }
    std::int32_t& slot = perm[std::size_t(position)];
    if (slot >= 0) {
      checks.fail("q_invperm holds " + to_string(position) + " twice (at " + to_string(slot) +
                  " and " + to_string(input) + "), so it is not a permutation");
    }
    slot = static_cast<std::int32_t>(input);
  }
  return perm;
}

}  // namespace

double Exl2Layout::bits_per_weight() const {
  double bits = 0.0;
  for (const kernels::Exl2Group& group : groups)
    bits += double(group.rows) * group.bits;
  return in_features > 0 ? bits / double(in_features) : 0.0;
}

Exl2Layout describe_exl2(std::string_view key, const Exl2Tensors& tensors,
                         const LinearShape& shape) {
  const detail::LayerChecks checks(key, "EXL2");
  checks.expect("q_weight", tensors.q_weight, {DType::I32}, 2);
  checks.expect("q_invperm", tensors.q_invperm, {DType::I32, DType::I16}, 1);
  checks.expect("q_scale", tensors.q_scale, {DType::I32}, 2);
  checks.expect("q_scale_max", tensors.q_scale_max, {DType::F16}, 1);
  checks.expect("q_groups", tensors.q_groups, {DType::I16, DType::I32}, 1);

  Exl2Layout layout;
  const std::int64_t q_rows = tensors.q_weight.shape[0];
  layout.q_columns = tensors.q_weight.shape[1];
  layout.in_features = tensors.q_invperm.shape[0];
  if (q_rows == 0 || layout.q_columns == 0 || layout.in_features == 0) {
    checks.fail("q_weight has shape " + format_shape(tensors.q_weight.shape) + " and q_invperm " +
                format_shape(tensors.q_invperm.shape) + "; a layer needs inputs and outputs");
  }
  if (q_rows > INT32_MAX || layout.in_features > INT32_MAX) {
    checks.fail("q_weight has shape " + format_shape(tensors.q_weight.shape) +
                ", more rows than Quire supports");
  }
  if (layout.q_columns % 32 != 0) {
    checks.fail("q_weight has " + to_string(layout.q_columns) +
                " columns; EXL2 converters pad the outputs to a multiple of 32");
  }
  const std::int64_t entries = tensors.q_groups.shape[0];
  if (entries == 0 || entries % 2 != 0) {
    checks.fail("q_groups has " + to_string(entries) +
                " entries; it holds a (bits, first q_weight row) pair per group");
  }
  const std::int64_t groups = entries / 2;
  const std::vector<std::int64_t> scale_shape = {groups, layout.q_columns / 8};
  if (tensors.q_scale.shape != scale_shape) {
    checks.fail("q_scale has shape " + format_shape(tensors.q_scale.shape) + "; " +
                to_string(groups) + " groups of " + to_string(layout.q_columns) + " columns need " +
                format_shape(scale_shape));
  }
  if (tensors.q_scale_max.shape[0] != groups) {
    checks.fail("q_scale_max has " + to_string(tensors.q_scale_max.shape[0]) + " entries for " +
                to_string(groups) + " groups");
  }
  if (shape.in_features > 0 && shape.in_features != layout.in_features) {
    checks.fail_config("q_invperm has " + to_string(layout.in_features) +
                       " entries, but the layer has " + to_string(shape.in_features) + " inputs");
  }
  layout.out_features = output_count(checks, tensors, shape, layout.q_columns);
  if (tensors.bias) checks.expect_bias(*tensors.bias, layout.out_features);
  layout.groups = read_groups(checks, tensors, groups, layout.in_features);
  layout.perm = read_permutation(checks, tensors.q_invperm);
  for (std::int64_t g = 0; g < groups; ++g) {
    if (!std::isfinite(kernels::half_to_float(detail::read_u16(tensors.q_scale_max, g)))) {
      checks.fail("q_scale_max[" + to_string(g) + "] is not a finite number");
    }
  }
  return layout;
}

kernels::LinearWeight host_linear_weight(const Exl2Layout& layout, const Exl2Tensors& tensors) {
  kernels::Exl2Weight exl2;
  exl2.q_weight = detail::host_pointer<std::uint32_t>(tensors.q_weight, "q_weight");
  exl2.q_scale = detail::host_pointer<std::uint32_t>(tensors.q_scale, "q_scale");
  exl2.q_scale_max = detail::host_pointer<std::uint16_t>(tensors.q_scale_max, "q_scale_max");
  exl2.perm = layout.perm.data();
  exl2.groups = layout.groups;
  exl2.q_columns = layout.q_columns;
  kernels::LinearWeight weight;
  weight.in_features = layout.in_features;
  weight.out_features = layout.out_features;
  weight.format = std::move(exl2);
  detail::set_host_bias(weight, tensors.bias);
  return weight;
}

}  // namespace quire::engine::formats
