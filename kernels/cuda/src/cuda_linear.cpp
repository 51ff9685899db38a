#include "cuda_linear.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <variant>

#include "capture_guard.h"
#include "cublas_library.h"
#include "linear_checks.h"
#include "linear_ops.h"
#include "quire/kernels/cuda/cuda_error.h"

namespace quire::kernels::cuda {
namespace {

// cuBLAS operands are built in pieces of at most this size (the FP16 inputs
// of a range of rows, the FP16 weights of a range of columns), so prefill's
// scratch memory stays within the reserve that placement leaves on a GPU.
constexpr std::size_t kOperandBytes = std::size_t{64} << 20;
// Rows per cuBLAS call: well inside its int dimensions.
constexpr std::int64_t kMaxGemmRows = std::int64_t{1} << 20;
// Scratch grows in steps of this size, so that growing row counts do not
// reallocate on every call.
constexpr std::size_t kScratchStep = std::size_t{1} << 20;
// Cached per-weight entries; past this (many models loaded and freed in
// turn) the cache starts over.
constexpr std::size_t kCacheEntries = 4096;
// What NVIDIA recommends for cuBLAS on Hopper (its kernels use less on older
// GPUs); fixed, so that captured products never need more.
constexpr std::size_t kCublasWorkspaceBytes = std::size_t{32} << 20;

std::int64_t round_up(std::int64_t value, std::int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

bool aligned16(const void* pointer) {
  return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0;
}

bool same_groups(const std::vector<Exl2Group>& a, const std::vector<Exl2Group>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const Exl2Group& x, const Exl2Group& y) {
                      return x.bits == y.bits && x.rows == y.rows && x.first_row == y.first_row &&
                             x.q_row == y.q_row;
                    });
}

}  // namespace

LinearVariant linear_variant_from_environment() {
  const char* named = std::getenv("QUIRE_CUDA_LINEAR");
  const std::string name = named != nullptr ? named : "";
  if (name.empty() || name == "fp32") return LinearVariant::fp32;
  if (name == "half2") return LinearVariant::half2;
  if (name == "half2x4") return LinearVariant::half2x4;
  if (name == "dp4a") return LinearVariant::dp4a;
  throw std::invalid_argument("QUIRE_CUDA_LINEAR is \"" + name +
                              "\": it names the CUDA decode products' kernels, \"fp32\", "
                              "\"half2\", \"half2x4\" or \"dp4a\"; unset it for the default");
}

LinearRunner::LinearRunner(Backend& backend, int device, int gpu, void* stream,
                           std::atomic<std::uint64_t>& workspace_generation)
    : backend_(backend),
      device_(device),
      gpu_(gpu),
      stream_(stream),
      workspace_generation_(workspace_generation),
      variant_(linear_variant_from_environment()) {
  check(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, gpu),
        "read CUDA device properties");
  sm_count_ = std::max(sm_count_, 1);
}

LinearRunner::~LinearRunner() {
  // The handle belongs to this device's context; the buffers free themselves.
  if (cublas_ && cudaSetDevice(gpu_) == cudaSuccess) cublas_.reset();
}

void* LinearRunner::scratch(DeviceBuffer& buffer, std::size_t bytes) {
  if (buffer.bytes() < bytes) {
    refuse_while_capturing("linear: growing its scratch");
    // Freeing waits for the queued work that may still use the old buffer.
    buffer.reset();
    ++workspace_generation_;
    buffer = backend_.allocate(
        device_, static_cast<std::size_t>(round_up(static_cast<std::int64_t>(bytes), kScratchStep)),
        "linear layer scratch");
  }
  return buffer.data();
}

void LinearRunner::release_scratch() {
  if (!inputs_ && !weights_ && !partials_ && !row_scales_ && !tile_counters_ && !products_) return;
  refuse_while_capturing("linear: freeing its scratch");
  // Freeing waits for the queued work that may still use the buffers.
  inputs_.reset();
  weights_.reset();
  partials_.reset();
  row_scales_.reset();
  tile_counters_.reset();
  products_.reset();
  ++workspace_generation_;
}

unsigned* LinearRunner::tile_counters() {
  if (!tile_counters_) {
    refuse_while_capturing("linear: allocating its tile counters");
    const auto bytes =
        static_cast<std::size_t>(matvec_counter_capacity(sm_count_)) * sizeof(unsigned);
    tile_counters_ = backend_.allocate(device_, bytes, "linear layer tile counters");
    // Zero once: every split product leaves them at zero again.
    check(cudaMemsetAsync(tile_counters_.data(), 0, bytes, static_cast<cudaStream_t>(stream_)),
          "linear: clear tile counters");
    ++workspace_generation_;
  }
  return static_cast<unsigned*>(tile_counters_.data());
}

void LinearRunner::validate_group_indices(const LinearWeight& weight, const GptqWeight& gptq) {
  const auto key =
      std::make_tuple(static_cast<const void*>(gptq.g_idx), weight.in_features, gptq.groups);
  if (checked_group_indices_.count(key) != 0) return;
  std::vector<std::int32_t> g_idx(static_cast<std::size_t>(weight.in_features));
  backend_.copy(g_idx.data(), -1, gptq.g_idx, device_, g_idx.size() * sizeof(std::int32_t));
  check_group_indices(g_idx, gptq.groups);
  if (checked_group_indices_.size() >= kCacheEntries) checked_group_indices_.clear();
  checked_group_indices_.insert(key);
}

const void* LinearRunner::exl2_table(const Exl2Weight& exl2) {
  const auto found = exl2_tables_.find(exl2.q_weight);
  if (found != exl2_tables_.end() && same_groups(found->second.groups, exl2.groups)) {
    return found->second.table.data();
  }
  refuse_while_capturing("linear: uploading an EXL2 group table");
  if (found != exl2_tables_.end() || exl2_tables_.size() >= kCacheEntries) ++workspace_generation_;
  if (found == exl2_tables_.end() && exl2_tables_.size() >= kCacheEntries) exl2_tables_.clear();
  std::vector<std::int32_t> packed;
  packed.reserve(exl2.groups.size() * 4);
  for (const Exl2Group& group : exl2.groups) {
    packed.insert(packed.end(), {group.bits, group.rows, group.first_row, group.q_row});
  }
  const std::size_t bytes = packed.size() * sizeof(std::int32_t);
  DeviceBuffer table = backend_.allocate(device_, bytes, "EXL2 group table");
  backend_.copy(table.data(), device_, packed.data(), -1, bytes);
  Exl2Table& entry = exl2_tables_[exl2.q_weight];
  entry.groups = exl2.groups;
  entry.table = std::move(table);
  return entry.table.data();
}

Exl2DeviceWeight LinearRunner::exl2_weight(const LinearWeight& weight, const Exl2Weight& exl2) {
  Exl2DeviceWeight device;
  device.perm = exl2.perm;
  device.q_weight = exl2.q_weight;
  device.q_scale = exl2.q_scale;
  device.q_scale_max = exl2.q_scale_max;
  device.groups = exl2_table(exl2);
  device.group_count = static_cast<int>(exl2.groups.size());
  device.columns = exl2_columns(weight, exl2);
  return device;
}

Cublas* LinearRunner::cublas() {
  if (!cublas_opened_) {
    refuse_while_capturing("linear: starting cuBLAS");
    if (!cublas_workspace_) {
      cublas_workspace_ = backend_.allocate(device_, kCublasWorkspaceBytes, "cuBLAS workspace");
    }
    // Throws when the library opens but cannot start; the next call retries.
    cublas_ = Cublas::create(stream_, cublas_workspace_.data(), cublas_workspace_.bytes(),
                             cublas_missing_);
    cublas_opened_ = true;
  }
  return cublas_.get();
}

void LinearRunner::run(const float* x, std::int64_t rows, const LinearWeight& weight, float* out) {
  check_linear_weight(weight);
  if (const auto* gptq = std::get_if<GptqWeight>(&weight.format); gptq && gptq->g_idx) {
    validate_group_indices(weight, *gptq);
  }
  if (rows < 0) throw std::invalid_argument("linear: negative row count");
  if (rows == 0) return;
  if (x == nullptr || out == nullptr) throw std::invalid_argument("linear: null input or output");
  if (rows > kMatvecMaxRows) {
    if (Cublas* blas = cublas()) return cublas_product(*blas, x, rows, weight, out);
  }
  // Without cuBLAS, many rows take the fused kernels too, kMatvecMaxRows at a
  // time: slower for long prompts, the same results.
  fused_product(x, rows, weight, out);
}

void LinearRunner::fused_product(const float* x, std::int64_t rows, const LinearWeight& weight,
                                 float* out) {
  if (const auto* exl3 = std::get_if<Exl3Weight>(&weight.format)) {
    return exl3_fused_product(x, rows, weight, *exl3, out);
  }
  const std::int64_t in = weight.in_features;
  const std::int64_t out_features = weight.out_features;
  const auto* exl2 = std::get_if<Exl2Weight>(&weight.format);
  const Exl2DeviceWeight exl2_device = exl2 ? exl2_weight(weight, *exl2) : Exl2DeviceWeight{};

  MatvecCall call;
  call.in_features = in;
  call.out_features = out_features;
  call.bias = weight.bias;
  call.bias_dtype = weight.bias_dtype;
  call.sm_count = sm_count_;
  call.variant = variant_;
  call.partial_capacity = matvec_partial_capacity(sm_count_);
  call.partials = static_cast<float*>(
      scratch(partials_, static_cast<std::size_t>(call.partial_capacity) * sizeof(float)));
  call.tile_counters = tile_counters();

  // The dense and GPTQ kernels read four inputs per 16-byte load, so their
  // inputs are copied when x is not aligned. The EXL2 kernel reads each input
  // through the permutation on its own.
  const bool gather = exl2 == nullptr && (!aligned16(x) || in % 4 != 0);
  const std::int64_t stride = gather ? round_up(in, 8) : in;
  float* gathered = nullptr;
  if (gather) {
    const std::int64_t chunk = std::min<std::int64_t>(rows, kMatvecMaxRows);
    gathered = static_cast<float*>(
        scratch(inputs_, static_cast<std::size_t>(chunk * stride) * sizeof(float)));
  }
  for (std::int64_t r0 = 0; r0 < rows; r0 += kMatvecMaxRows) {
    call.rows = static_cast<int>(std::min<std::int64_t>(kMatvecMaxRows, rows - r0));
    call.out = out + r0 * out_features;
    if (gather) {
      launch_gather_inputs(x + r0 * in, call.rows, in, gathered, stride, stream_);
      call.x = gathered;
      call.x_stride = stride;
    } else {
      call.x = x + r0 * in;
      call.x_stride = in;
    }
    launch_fused(call, weight, exl2_device);
  }
}

void LinearRunner::launch_fused(const MatvecCall& call, const LinearWeight& weight,
                                const Exl2DeviceWeight& exl2) {
  if (const auto* dense = std::get_if<DenseWeight>(&weight.format)) {
    launch_dense_matvec(call, *dense, stream_);
  } else if (const auto* gptq = std::get_if<GptqWeight>(&weight.format)) {
    launch_gptq_matvec(call, *gptq, stream_);
  } else if (const auto* fp8 = std::get_if<Fp8Weight>(&weight.format)) {
    launch_fp8_matvec(call, *fp8, stream_);
  } else {
    launch_exl2_matvec(call, exl2, stream_);
  }
}

void LinearRunner::cublas_product(Cublas& blas, const float* x, std::int64_t rows,
                                  const LinearWeight& weight, float* out) {
  if (const auto* exl3 = std::get_if<Exl3Weight>(&weight.format)) {
    return cublas_exl3(blas, x, rows, weight, *exl3, out);
  }
  const auto* dense = std::get_if<DenseWeight>(&weight.format);
  if (dense != nullptr && dense->dtype == DType::F32) {
    // FP32 weights take FP32 inputs as they are: no conversion, no scaling.
    const auto in = static_cast<int>(weight.in_features);
    const auto n = static_cast<int>(weight.out_features);
    for (std::int64_t r0 = 0; r0 < rows; r0 += kMaxGemmRows) {
      const auto count = static_cast<int>(std::min(kMaxGemmRows, rows - r0));
      blas.gemm(true, n, count, in, dense->data, in, x + r0 * weight.in_features, in, DType::F32,
                out + r0 * weight.out_features, n);
    }
    launch_finish_outputs(out, rows, weight.out_features, nullptr, nullptr, weight.bias,
                          weight.bias_dtype, stream_);
    return;
  }
  auto* row_scales =
      static_cast<float*>(scratch(row_scales_, static_cast<std::size_t>(rows) * sizeof(float)));
  const auto* fp8 = std::get_if<Fp8Weight>(&weight.format);
  if (dense != nullptr) {
    cublas_dense(blas, x, rows, weight, *dense, out, row_scales);
  } else {
    cublas_quantized(blas, x, rows, weight, out, row_scales);
  }
  launch_finish_outputs(out, rows, weight.out_features, row_scales,
                        fp8 != nullptr ? fp8->scales : nullptr, weight.bias, weight.bias_dtype,
                        stream_);
}

// FP16 and BF16 weights: the inputs are converted to the weight's type (each
// row scaled by a power of two, undone on the outputs), as cuBLAS multiplies
// two operands of one type. The products accumulate in FP32.
void LinearRunner::cublas_dense(Cublas& blas, const float* x, std::int64_t rows,
                                const LinearWeight& weight, const DenseWeight& dense, float* out,
                                float* row_scales) {
  const std::int64_t in = weight.in_features;
  const std::int64_t stride = round_up(in, 8);
  const std::int64_t chunk = std::clamp<std::int64_t>(
      static_cast<std::int64_t>(kOperandBytes) / (stride * 2), 1, kMaxGemmRows);
  void* inputs = scratch(inputs_, static_cast<std::size_t>(std::min(rows, chunk) * stride * 2));
  for (std::int64_t r0 = 0; r0 < rows; r0 += chunk) {
    const std::int64_t count = std::min(chunk, rows - r0);
    launch_convert_inputs(x + r0 * in, count, in, nullptr, dense.dtype, inputs, stride,
                          row_scales + r0, stream_);
    blas.gemm(true, static_cast<int>(weight.out_features), static_cast<int>(count),
              static_cast<int>(in), dense.data, static_cast<int>(in), inputs,
              static_cast<int>(stride), dense.dtype, out + r0 * weight.out_features,
              static_cast<int>(weight.out_features));
  }
}

// EXL2, GPTQ and FP8: the weights are dequantized to FP16 for a range of
// output columns at a time, and the inputs converted to FP16, as exllamav2
// multiplies. EXL2 and GPTQ give [K, columns] in quantized row order (the
// inputs permuted alike); FP8, stored [N, K] as dense weights are, gives
// weight rows [columns, K] (exact copies, its scales left to
// launch_finish_outputs), multiplied transposed. The loop runs over column
// ranges outside, so each weight is dequantized once; the inputs are
// converted once unless they exceed one piece.
void LinearRunner::cublas_quantized(Cublas& blas, const float* x, std::int64_t rows,
                                    const LinearWeight& weight, float* out, float* row_scales) {
  const std::int64_t in = weight.in_features;
  const std::int64_t out_features = weight.out_features;
  const std::int64_t stride = round_up(in, 8);
  const auto* exl2 = std::get_if<Exl2Weight>(&weight.format);
  const auto* gptq = std::get_if<GptqWeight>(&weight.format);
  const auto* fp8 = std::get_if<Fp8Weight>(&weight.format);
  const Exl2DeviceWeight exl2_device = exl2 ? exl2_weight(weight, *exl2) : Exl2DeviceWeight{};
  const std::int32_t* perm = exl2 ? exl2->perm : nullptr;

  const std::int64_t row_chunk = std::clamp<std::int64_t>(
      static_cast<std::int64_t>(kOperandBytes) / (stride * 2), 1, kMaxGemmRows);
  // All columns when they fit in one piece, else multiples of 32 columns.
  const std::int64_t fitting_columns = static_cast<std::int64_t>(kOperandBytes) / (stride * 2);
  std::int64_t column_chunk = round_up(out_features, 8);
  if (column_chunk > fitting_columns) {
    column_chunk = std::max<std::int64_t>(32, fitting_columns / 32 * 32);
  }
  void* inputs = scratch(inputs_, static_cast<std::size_t>(std::min(rows, row_chunk) * stride * 2));
  void* weights = scratch(
      weights_,
      static_cast<std::size_t>(stride * round_up(std::min(column_chunk, out_features), 8) * 2));

  const bool converted_once = rows <= row_chunk;
  if (converted_once) {
    launch_convert_inputs(x, rows, in, perm, DType::F16, inputs, stride, row_scales, stream_);
  }
  for (std::int64_t n0 = 0; n0 < out_features; n0 += column_chunk) {
    const std::int64_t columns = std::min(column_chunk, out_features - n0);
    const std::int64_t ld = fp8 != nullptr ? stride : round_up(columns, 8);
    if (exl2 != nullptr) {
      launch_exl2_dequantize(exl2_device, n0, n0 + columns, weights, ld, stream_);
    } else if (gptq != nullptr) {
      launch_gptq_dequantize(*gptq, in, out_features, n0, n0 + columns, weights, ld, stream_);
    } else {
      launch_fp8_dequantize(*fp8, in, n0, n0 + columns, weights, ld, stream_);
    }
    for (std::int64_t r0 = 0; r0 < rows; r0 += row_chunk) {
      const std::int64_t count = std::min(row_chunk, rows - r0);
      if (!converted_once) {
        launch_convert_inputs(x + r0 * in, count, in, perm, DType::F16, inputs, stride,
                              row_scales + r0, stream_);
      }
      blas.gemm(fp8 != nullptr, static_cast<int>(columns), static_cast<int>(count),
                static_cast<int>(in), weights, static_cast<int>(ld), inputs,
                static_cast<int>(stride), DType::F16, out + r0 * out_features + n0,
                static_cast<int>(out_features));
    }
  }
}

}  // namespace quire::kernels::cuda
