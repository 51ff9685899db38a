#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "linear_ops.h"
#include "quire/kernels/backend.h"

namespace quire::kernels::cuda {

class Cublas;

// The fused products' variant named by QUIRE_CUDA_LINEAR ("fp32", the
// default, "half2", "half2x4" or "dp4a"; see LinearVariant). Throws std::invalid_argument,
// naming the variable and the values it takes, for anything else.
LinearVariant linear_variant_from_environment();

// CudaBackend::linear on one device. Up to kMatvecMaxRows input rows (decode)
// go through the fused dequantizing kernels, FP32 throughout (EXL3's take
// its rotated inputs as two FP16 parts on tensor cores, FP32 sums); more rows
// (prefill) through cuBLAS, quantized and FP8 weights first dequantized to
// FP16 a range of columns at a time. Owns that device's scratch memory and the
// per-weight state that should not be rebuilt on every call. CudaBackend
// serializes the calls and makes the device current first. `device` is the
// backend's logical device (whose budget the scratch counts against), `gpu`
// the CUDA runtime's index of the GPU it lives on. Each time it moves device
// memory that queued kernels refer to (scratch grown, a table rebuilt) it
// counts up `workspace_generation`, which CUDA graphs recorded earlier check.
class LinearRunner {
 public:
  LinearRunner(Backend& backend, int device, int gpu, void* stream,
               std::atomic<std::uint64_t>& workspace_generation);
  ~LinearRunner();
  LinearRunner(const LinearRunner&) = delete;
  LinearRunner& operator=(const LinearRunner&) = delete;

  // Backend::linear, with the CPU backend's checks and semantics.
  void run(const float* x, std::int64_t rows, const LinearWeight& weight, float* out);
  // Frees the scratch buffers (not the cuBLAS workspace or the per-weight
  // tables); the next products allocate what they need again.
  void release_scratch();

 private:
  struct Exl2Table {
    std::vector<Exl2Group> groups;  // what `table` was built from
    DeviceBuffer table;
  };

  void* scratch(DeviceBuffer& buffer, std::size_t bytes);
  unsigned* tile_counters();  // allocated and zeroed on first use
  void validate_group_indices(const LinearWeight& weight, const GptqWeight& gptq);
  const void* exl2_table(const Exl2Weight& exl2);
  Exl2DeviceWeight exl2_weight(const LinearWeight& weight, const Exl2Weight& exl2);
  Cublas* cublas();

  void fused_product(const float* x, std::int64_t rows, const LinearWeight& weight, float* out);
  void launch_fused(const MatvecCall& call, const LinearWeight& weight,
                    const Exl2DeviceWeight& exl2);
  void cublas_product(Cublas& blas, const float* x, std::int64_t rows, const LinearWeight& weight,
                      float* out);
  void cublas_dense(Cublas& blas, const float* x, std::int64_t rows, const LinearWeight& weight,
                    const DenseWeight& dense, float* out, float* row_scales);
  void cublas_quantized(Cublas& blas, const float* x, std::int64_t rows, const LinearWeight& weight,
                        float* out, float* row_scales);
  // EXL3's own paths (cuda_linear_exl3.cpp): its products rotate their
  // inputs and outputs.
  void exl3_fused_product(const float* x, std::int64_t rows, const LinearWeight& weight,
                          const Exl3Weight& exl3, float* out);
  void cublas_exl3(Cublas& blas, const float* x, std::int64_t rows, const LinearWeight& weight,
                   const Exl3Weight& exl3, float* out);

  Backend& backend_;
  int device_;
  int gpu_;
  void* stream_;  // cudaStream_t
  std::atomic<std::uint64_t>& workspace_generation_;
  int sm_count_ = 1;
  LinearVariant variant_ = LinearVariant::fp32;

  DeviceBuffer inputs_;         // gathered or converted inputs
  DeviceBuffer weights_;        // FP16 columns of a quantized weight for cuBLAS
  DeviceBuffer partials_;       // split products' partial sums
  DeviceBuffer row_scales_;     // the factors of converted input rows
  DeviceBuffer tile_counters_;  // split products' per-tile block counts
  DeviceBuffer products_;       // EXL3 prefill: cuBLAS's sums before the output rotation

  // Keyed by q_weight: the groups are host data, uploaded once per weight;
  // an entry whose groups differ from the call's (a new weight at a freed
  // address) is rebuilt.
  std::unordered_map<const void*, Exl2Table> exl2_tables_;
  // (g_idx, K, groups) of GPTQ group indices already checked, so that their
  // copy to the host and the wait for it happen once per weight.
  std::set<std::tuple<const void*, std::int64_t, int>> checked_group_indices_;

  // cuBLAS's workspace, set on the handle so that a captured product uses
  // this buffer rather than memory cuBLAS would allocate during the capture.
  DeviceBuffer cublas_workspace_;
  std::unique_ptr<Cublas> cublas_;
  bool cublas_opened_ = false;  // whether opening it was tried
  std::string cublas_missing_;  // why it could not be opened
};

}  // namespace quire::kernels::cuda
