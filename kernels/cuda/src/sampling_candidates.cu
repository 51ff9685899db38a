// The k highest logits of each row, ranked, with the row's counts and tail
// sum (top_logits.h), so that a sampler can decide from a few hundred numbers
// instead of the whole row. One block per row:
//   1. four passes of an 8-bit radix select over an order-preserving 32-bit
//      key find T, the key of the k-th logit, and how many logits equal to T
//      belong to the top k (the ones with the lowest ids);
//   2. one pass in id order collects the keys above T, the first ties, and
//      sums the tail;
//   3. a bitonic sort in shared memory ranks the k collected.
// Selection and ranking are exact (integer keys, ties by id). The tail sum
// adds FP32 expf terms in double, each thread in id order and then a fixed
// tree, so it is reproducible run to run and within
// kTopLogitsTailSumTolerance of the host's double sum.

#include <cuda_runtime.h>

#include <cstdint>

#include "quire/kernels/cuda/cuda_error.h"
#include "sampling_ops.h"

namespace quire::kernels::cuda {
namespace {

constexpr int kThreads = 1024;
constexpr int kWarps = kThreads / 32;
constexpr int kGatherThreads = 256;
constexpr int kBins = 256;
constexpr unsigned kFullMask = 0xffffffffu;
constexpr std::uint32_t kMinusInfinityKey = 0x007fffffu;
constexpr std::int64_t kMaxRowBlocks = 65535;

static_assert(kMaxTopLogits <= kThreads, "the bitonic sort gives each thread one element");

// As rank_key in kernels/common/src/top_logits.cpp: larger logit, larger key;
// -0 as +0; NaN as 0, below -inf (whose key is kMinusInfinityKey).
__device__ std::uint32_t rank_key(float logit) {
  if (isnan(logit)) return 0;
  const std::uint32_t bits = __float_as_uint(logit == 0.0f ? 0.0f : logit);
  return (bits & 0x80000000u) != 0 ? ~bits : bits | 0x80000000u;
}

__device__ float key_value(std::uint32_t key) {
  return __uint_as_float((key & 0x80000000u) != 0 ? key & 0x7fffffffu : ~key);
}

// Ranked by key, highest first, then by id, lowest first: a larger composite
// ranks first. Padding (0) ranks after every real element.
__device__ std::uint64_t composite(std::uint32_t key, std::uint32_t id) {
  return (std::uint64_t{key} << 32) | (0xffffffffu - id);
}

__device__ double block_sum(double value, double* partial) {
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  for (int offset = 16; offset > 0; offset /= 2)
    value += __shfl_xor_sync(kFullMask, value, offset);
  if (lane == 0) partial[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = partial[lane];
    for (int offset = 16; offset > 0; offset /= 2)
      value += __shfl_xor_sync(kFullMask, value, offset);
  }
  return value;  // meaningful in thread 0
}

struct SelectState {
  std::uint32_t prefix;  // the key bits of T found so far
  std::uint32_t mask;    // which bits of prefix are found
  int remaining;         // how many of the keys matching prefix belong to the top k
  std::uint32_t max_key;
  int finite;
  int nans;
};

__global__ void __launch_bounds__(kThreads)
    top_logits_kernel(const float* __restrict__ logits, std::int64_t rows, std::int64_t vocab,
                      int k, const float* __restrict__ inv_temperatures, float* __restrict__ values,
                      std::int32_t* __restrict__ ids, TopLogitsStats* __restrict__ stats) {
  __shared__ int histogram[kBins];
  __shared__ std::uint64_t selected[kMaxTopLogits];
  __shared__ int warp_ties[kWarps];
  __shared__ double partial[kWarps];
  __shared__ SelectState state;
  __shared__ int above_used, ties_taken;

  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  const int n = static_cast<int>(vocab);
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* row = logits + r * vocab;
    if (threadIdx.x == 0) state = {0u, 0u, k, 0u, 0, 0};

    // 1. Radix select, most significant byte first. The first pass also
    // counts NaN and finite logits and finds the maximum.
    for (int shift = 24; shift >= 0; shift -= 8) {
      for (int b = threadIdx.x; b < kBins; b += kThreads)
        histogram[b] = 0;
      __syncthreads();
      const std::uint32_t prefix = state.prefix, mask = state.mask;
      std::uint32_t max_key = 0;
      int finite = 0, nans = 0;
      // Every lane runs the same number of iterations, so the warp-wide
      // intrinsics below see the whole warp.
      for (int base = 0; base < n; base += kThreads) {
        const int i = base + static_cast<int>(threadIdx.x);
        const std::uint32_t key = i < n ? rank_key(row[i]) : 0u;
        const bool counted = i < n && (key & mask) == prefix;
        const unsigned bin = counted ? (key >> shift) & 0xffu : kBins;
        // Lanes with the same bin add once: logits often share their top
        // byte, and 1024 threads on one counter would serialize.
        const unsigned peers = __match_any_sync(kFullMask, bin);
        if (counted && lane == static_cast<unsigned>(__ffs(static_cast<int>(peers)) - 1)) {
          atomicAdd(&histogram[bin], __popc(peers));
        }
        if (shift == 24 && i < n) {
          max_key = max(max_key, key);
          nans += key == 0u;
          finite += key > kMinusInfinityKey;
        }
      }
      if (shift == 24) {
        for (int offset = 16; offset > 0; offset /= 2) {
          max_key = max(max_key, __shfl_xor_sync(kFullMask, max_key, offset));
          finite += __shfl_xor_sync(kFullMask, finite, offset);
          nans += __shfl_xor_sync(kFullMask, nans, offset);
        }
        if (lane == 0) {
          atomicMax(&state.max_key, max_key);
          atomicAdd(&state.finite, finite);
          atomicAdd(&state.nans, nans);
        }
      }
      __syncthreads();
      if (threadIdx.x == 0) {
        // The bin holding the remaining-th largest key among those that match.
        int above = 0, bin = kBins - 1;
        for (; bin > 0; --bin) {
          if (above + histogram[bin] >= state.remaining) break;
          above += histogram[bin];
        }
        state.remaining -= above;
        state.prefix |= static_cast<std::uint32_t>(bin) << shift;
        state.mask |= 0xffu << shift;
        above_used = 0;
        ties_taken = 0;
      }
      __syncthreads();
    }
    const std::uint32_t threshold = state.prefix;
    const int ties_wanted = state.remaining;  // >= 1
    const int above_count = k - ties_wanted;
    const float maximum = key_value(state.max_key);
    const bool sum_tail = isfinite(maximum);
    const float inv_temperature = inv_temperatures[r];

    // 2. Collect in id order; the tail sum is over what is not collected.
    double tail = 0;
    for (int base = 0; base < n; base += kThreads) {
      const int i = base + static_cast<int>(threadIdx.x);
      const float logit = i < n ? row[i] : 0.0f;
      const std::uint32_t key = i < n ? rank_key(logit) : 0u;
      const bool above = i < n && key > threshold;
      const bool tie = i < n && key == threshold;
      if (above)
        selected[atomicAdd(&above_used, 1)] = composite(key, static_cast<std::uint32_t>(i));
      bool taken = above;
      // Ties go to the lowest ids: rank each tie within this tile by a
      // block-wide prefix count, after the ties of earlier tiles.
      const int tile_ties = __syncthreads_count(tie);
      if (tile_ties > 0) {
        const unsigned ballot = __ballot_sync(kFullMask, tie);
        if (lane == 0) warp_ties[warp] = __popc(ballot);
        __syncthreads();
        int rank = ties_taken + __popc(ballot & ((1u << lane) - 1u));
        for (unsigned w = 0; w < warp; ++w)
          rank += warp_ties[w];
        if (tie && rank < ties_wanted) {
          selected[above_count + rank] = composite(key, static_cast<std::uint32_t>(i));
          taken = true;
        }
        __syncthreads();
        if (threadIdx.x == 0) ties_taken += tile_ties;
      }
      if (sum_tail && !taken && key > kMinusInfinityKey) {
        tail += static_cast<double>(expf(__fmul_rn(__fsub_rn(logit, maximum), inv_temperature)));
      }
    }
    __syncthreads();
    tail = block_sum(tail, partial);

    // 3. Rank the k collected: bitonic sort, descending, padded with 0.
    int size = 1;
    while (size < k)
      size *= 2;
    for (int i = k + static_cast<int>(threadIdx.x); i < size; i += kThreads)
      selected[i] = 0;
    __syncthreads();
    for (int span = 2; span <= size; span *= 2) {
      for (int stride = span / 2; stride > 0; stride /= 2) {
        for (int i = threadIdx.x; i < size; i += kThreads) {
          const int j = i ^ stride;
          if (j > i) {
            const std::uint64_t a = selected[i], b = selected[j];
            const bool descending = (i & span) == 0;
            if (descending ? a < b : a > b) {
              selected[i] = b;
              selected[j] = a;
            }
          }
        }
        __syncthreads();
      }
    }
    for (int j = threadIdx.x; j < k; j += kThreads) {
      const auto id =
          static_cast<std::int32_t>(0xffffffffu - static_cast<std::uint32_t>(selected[j]));
      values[r * k + j] = row[id];
      ids[r * k + j] = id;
    }
    if (threadIdx.x == 0) {
      TopLogitsStats s;
      s.tail_sum = sum_tail ? static_cast<float>(tail) : 0.0f;
      s.finite = state.finite;
      s.nans = state.nans;
      s.reserved = 0;
      stats[r] = s;
    }
    __syncthreads();  // shared state is reset for the next row
  }
}

__global__ void __launch_bounds__(kGatherThreads)
    gather_logits_kernel(const float* __restrict__ logits, std::int64_t row_count,
                         std::int64_t vocab, const std::int32_t* __restrict__ rows,
                         const std::int32_t* __restrict__ ids, std::int64_t count,
                         float* __restrict__ out) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < count;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t row = rows[i], id = ids[i];
    out[i] = row >= 0 && row < row_count && id >= 0 && id < vocab ? logits[row * vocab + id]
                                                                  : __int_as_float(0x7fc00000);
  }
}

}  // namespace

void launch_top_logits(const float* logits, std::int64_t rows, std::int64_t vocab, int k,
                       const float* inv_temperatures, float* values, std::int32_t* ids,
                       TopLogitsStats* stats, void* stream) {
  if (rows <= 0) return;
  const auto blocks = static_cast<unsigned>(rows < kMaxRowBlocks ? rows : kMaxRowBlocks);
  top_logits_kernel<<<blocks, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      logits, rows, vocab, k, inv_temperatures, values, ids, stats);
  check(cudaGetLastError(), "top_logits");
}

void launch_gather_logits(const float* logits, std::int64_t row_count, std::int64_t vocab,
                          const std::int32_t* rows, const std::int32_t* ids, std::int64_t count,
                          float* out, void* stream) {
  if (count <= 0) return;
  const std::int64_t wanted = (count + kGatherThreads - 1) / kGatherThreads;
  const auto blocks = static_cast<unsigned>(wanted < kMaxRowBlocks ? wanted : kMaxRowBlocks);
  gather_logits_kernel<<<blocks, kGatherThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      logits, row_count, vocab, rows, ids, count, out);
  check(cudaGetLastError(), "gather_logits");
}

}  // namespace quire::kernels::cuda
