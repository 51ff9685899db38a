// CudaBackend's sampling-candidate ops: the arguments are checked on the host
// from their sizes alone (reading the logits would need a wait), then the
// kernels of sampling_candidates.cu go on the device's stream. Nothing here
// allocates or waits, so a captured decode step may include them.

#include "cuda_backend.h"
#include "sampling_ops.h"

namespace quire::kernels::cuda {

void CudaBackend::top_logits(int device, const float* logits, std::int64_t rows, std::int64_t vocab,
                             int k, const float* inv_temperatures, float* values, std::int32_t* ids,
                             TopLogitsStats* stats) {
  activate(device);
  check_top_logits(rows, vocab, k);
  launch_top_logits(logits, rows, vocab, k, inv_temperatures, values, ids, stats, stream(device));
}

void CudaBackend::gather_logits(int device, const float* logits, std::int64_t row_count,
                                std::int64_t vocab, const std::int32_t* rows,
                                const std::int32_t* ids, std::int64_t count, float* out) {
  activate(device);
  launch_gather_logits(logits, row_count, vocab, rows, ids, count, out, stream(device));
}

}  // namespace quire::kernels::cuda
