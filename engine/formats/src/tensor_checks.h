#pragma once

// Checks shared by the EXL2 and GPTQ layer descriptions. Every failure names
// the layer and the tensor, says what does not fit with numbers, and ends with
// what the user can do.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "quire/engine/formats/layer_tensors.h"
#include "quire/kernels/dtype.h"

namespace quire::engine::formats::detail {

class LayerChecks {
 public:
  // `format` ("EXL2", "GPTQ") appears in every message.
  LayerChecks(std::string_view key, std::string_view format);

  // Throws ModelError "<key> (<format>): <what>; download or convert the model again".
  [[noreturn]] void fail(const std::string& what) const;

  // The same for tensors that disagree with the layer's shape in config.json.
  [[noreturn]] void fail_config(const std::string& what) const;

  // "<key>.<suffix>"
  std::string tensor(std::string_view suffix) const;

  // The view's byte count must match its shape and dtype (std::invalid_argument
  // otherwise: the caller built a wrong view), its dtype must be one of
  // `dtypes` and its rank `rank` (ModelError otherwise).
  void expect(std::string_view suffix, const TensorView& view,
              std::initializer_list<kernels::DType> dtypes, std::size_t rank) const;

  // A bias of [out_features] elements in FP16, BF16 or F32.
  void expect_bias(const TensorView& bias, std::int64_t out_features) const;

 private:
  std::string key_;
  std::string format_;
};

// Element `index` of an I16 or I32 tensor. I16 reads as unsigned, as
// exllamav2 reads q_groups and q_invperm; the bytes may be unaligned.
std::int64_t read_index(const TensorView& view, std::int64_t index);

// Element `index` of an F16 tensor as its bit pattern.
std::uint16_t read_u16(const TensorView& view, std::int64_t index);

}  // namespace quire::engine::formats::detail
