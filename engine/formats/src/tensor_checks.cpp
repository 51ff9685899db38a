#include "tensor_checks.h"

#include <cstring>
#include <stdexcept>

#include "quire/engine/model_error.h"

namespace quire::engine::formats::detail {

using kernels::DType;

LayerChecks::LayerChecks(std::string_view key, std::string_view format)
    : key_(key), format_(format) {}

void LayerChecks::fail(const std::string& what) const {
  throw ModelError(key_ + " (" + format_ + "): " + what +
                   "; the file is damaged or was written by a broken converter — download or "
                   "convert the model again");
}

void LayerChecks::fail_config(const std::string& what) const {
  throw ModelError(key_ + " (" + format_ + "): " + what +
                   "; config.json does not describe these weights — use the config.json that "
                   "came with the model");
}

std::string LayerChecks::tensor(std::string_view suffix) const {
  return key_ + "." + std::string(suffix);
}

void LayerChecks::expect(std::string_view suffix, const TensorView& view,
                         std::initializer_list<DType> dtypes, std::size_t rank) const {
  for (const std::int64_t dim : view.shape) {
    if (dim < 0) throw std::invalid_argument(tensor(suffix) + ": negative dimension");
  }
  if (view.bytes.size() != std::size_t(view.elements()) * kernels::dtype_size(view.dtype)) {
    throw std::invalid_argument(tensor(suffix) + ": " + std::to_string(view.bytes.size()) +
                                " bytes for shape " + format_shape(view.shape));
  }
  bool known = false;
  std::string names;
  for (const DType dtype : dtypes) {
    known = known || dtype == view.dtype;
    names += (names.empty() ? "" : " or ") + std::string(kernels::dtype_name(dtype));
  }
  if (!known) {
    fail(std::string(suffix) + " has dtype " + std::string(kernels::dtype_name(view.dtype)) +
         ", expected " + names);
  }
  if (view.shape.size() != rank) {
    fail(std::string(suffix) + " has shape " + format_shape(view.shape) + ", expected " +
         std::to_string(rank) + " dimension" + (rank == 1 ? "" : "s"));
  }
}

void LayerChecks::expect_bias(const TensorView& bias, std::int64_t out_features) const {
  expect("bias", bias, {DType::F16, DType::BF16, DType::F32}, 1);
  if (bias.shape[0] != out_features) {
    fail("bias has " + std::to_string(bias.shape[0]) + " elements for " +
         std::to_string(out_features) + " outputs");
  }
}

std::int64_t read_index(const TensorView& view, std::int64_t index) {
  if (view.dtype == DType::I16) {
    std::uint16_t value = 0;
    std::memcpy(&value, view.bytes.data() + index * 2, 2);
    return value;
  }
  std::int32_t value = 0;
  std::memcpy(&value, view.bytes.data() + index * 4, 4);
  return value;
}

std::uint16_t read_u16(const TensorView& view, std::int64_t index) {
  std::uint16_t value = 0;
  std::memcpy(&value, view.bytes.data() + index * 2, 2);
  return value;
}

}  // namespace quire::engine::formats::detail
