#pragma once

#include <cstdint>

#include "quire/kernels/top_logits.h"

// Launchers of the sampling-candidate ops (sampling_candidates.cu), with the
// semantics of kernels/common's top_logits_host and gather_logits_host.
// Arguments are checked by CudaBackend first; every pointer is a device
// pointer and the work is queued on `stream` (a cudaStream_t) with no
// allocation and no wait, so the ops may be captured into a CUDA graph.

namespace quire::kernels::cuda {

void launch_top_logits(const float* logits, std::int64_t rows, std::int64_t vocab, int k,
                       const float* inv_temperatures, float* values, std::int32_t* ids,
                       TopLogitsStats* stats, void* stream);
void launch_gather_logits(const float* logits, std::int64_t row_count, std::int64_t vocab,
                          const std::int32_t* rows, const std::int32_t* ids, std::int64_t count,
                          float* out, void* stream);

}  // namespace quire::kernels::cuda
