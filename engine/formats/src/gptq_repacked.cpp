#include "quire/engine/formats/gptq_repacked.h"

#include "host_pointers.h"

namespace quire::engine::formats {

kernels::LinearWeight host_linear_weight(const GptqLayout& layout, const GptqRepacked& packed,
                                         const std::optional<TensorView>& bias) {
  kernels::GptqWeight gptq;
  gptq.qweight = packed.qweight.data();
  gptq.qzeros = layout.symmetric ? nullptr : packed.qzeros.data();
  gptq.scales = packed.scales.data();
  gptq.scale_dtype = layout.scale_dtype;
  gptq.g_idx = layout.g_idx.empty() ? nullptr : layout.g_idx.data();
  gptq.groups = layout.groups;
  gptq.group_size = layout.group_size;
  gptq.exact_zeros = layout.exact_zeros;
  gptq.bits = layout.bits;
  kernels::LinearWeight weight;
  weight.in_features = layout.in_features;
  weight.out_features = layout.out_features;
  weight.format = gptq;
  detail::set_host_bias(weight, bias);
  return weight;
}

}  // namespace quire::engine::formats
