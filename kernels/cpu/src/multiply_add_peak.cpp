// A register-only loop of independent multiply-adds per thread. Twelve
// accumulators (sixteen in 512-bit registers) cover the latency of two FMA
// units, so the loop runs at the processor's issue rate, not its latency.

#include "quire/kernels/cpu/multiply_add_peak.h"

#include <atomic>
#include <chrono>
#include <cstdint>

#include "quire/kernels/cpu/pair_products.h"
#include "quire/kernels/cpu/simd.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define QUIRE_HAVE_X86_PEAK 1
#endif

namespace quire::kernels {
namespace {

constexpr std::int64_t kRounds = 1 << 16;  // per call; about a millisecond

#ifdef QUIRE_HAVE_X86_PEAK
// Returns the multiply-adds done (lanes x instructions); `sink` keeps the
// sums alive.
__attribute__((target("avx2,fma"))) std::int64_t avx2_rounds(float seed, float& sink) {
  constexpr int kAccumulators = 12;
  __m256 acc[kAccumulators];
  for (int i = 0; i < kAccumulators; ++i)
    acc[i] = _mm256_set1_ps(seed + float(i));
  const __m256 a = _mm256_set1_ps(0.999f), b = _mm256_set1_ps(1e-3f);
  for (std::int64_t round = 0; round < kRounds; ++round) {
#pragma GCC unroll 16
    for (int i = 0; i < kAccumulators; ++i)
      acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  }
  __m256 total = acc[0];
  for (int i = 1; i < kAccumulators; ++i)
    total = _mm256_add_ps(total, acc[i]);
  sink += _mm256_cvtss_f32(total);
  return kRounds * kAccumulators * 8;
}

__attribute__((target("avx512f"))) std::int64_t avx512_rounds(float seed, float& sink) {
  constexpr int kAccumulators = 16;
  __m512 acc[kAccumulators];
  for (int i = 0; i < kAccumulators; ++i)
    acc[i] = _mm512_set1_ps(seed + float(i));
  const __m512 a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(1e-3f);
  for (std::int64_t round = 0; round < kRounds; ++round) {
#pragma GCC unroll 16
    for (int i = 0; i < kAccumulators; ++i)
      acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  }
  __m512 total = acc[0];
  for (int i = 1; i < kAccumulators; ++i)
    total = _mm512_add_ps(total, acc[i]);
  // Stored and summed by hand: GCC 12's _mm512_reduce_add_ps trips its own
  // uninitialized-value warning.
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, total);
  for (const float lane : lanes)
    sink += lane;
  return kRounds * kAccumulators * 16;
}

// The integer tiles' instruction, 32 multiply-adds each (pair_products.h).
__attribute__((target("avx512f,avx512vnni"))) std::int64_t vnni_rounds(float seed, float& sink) {
  constexpr int kAccumulators = 16;
  __m512i acc[kAccumulators];
  for (int i = 0; i < kAccumulators; ++i)
    acc[i] = _mm512_set1_epi32(static_cast<int>(seed) + i);
  const __m512i a = _mm512_set1_epi32(0x00030001), b = _mm512_set1_epi32(0x00020005);
  for (std::int64_t round = 0; round < kRounds; ++round) {
#pragma GCC unroll 16
    for (int i = 0; i < kAccumulators; ++i)
      acc[i] = add_pair_products(acc[i], a, b);
  }
  __m512i total = acc[0];
  for (int i = 1; i < kAccumulators; ++i)
    total = _mm512_add_epi32(total, acc[i]);
  alignas(64) std::int32_t lanes[16];
  _mm512_store_si512(lanes, total);
  for (const std::int32_t lane : lanes)
    sink += float(lane);
  return kRounds * kAccumulators * 32;
}
#endif

std::int64_t sse_rounds(float seed, float& sink) {
  constexpr int kAccumulators = 12;
  float acc[kAccumulators][4];
  for (int i = 0; i < kAccumulators; ++i) {
    for (float& lane : acc[i])
      lane = seed + float(i);
  }
  for (std::int64_t round = 0; round < kRounds; ++round) {
#pragma GCC unroll 12
    for (auto& accumulator : acc) {
#pragma GCC unroll 4
      for (float& lane : accumulator)
        lane = lane * 0.999f + 1e-3f;
    }
  }
  for (const auto& accumulator : acc) {
    for (const float lane : accumulator)
      sink += lane;
  }
  return kRounds * kAccumulators * 4;
}

using Rounds = std::int64_t (*)(float, float&);

// Multiply-adds per second of `rounds` on every thread of `pool`.
double measure_rate(ThreadPool& pool, Rounds rounds, double seconds) {
  using Clock = std::chrono::steady_clock;
  const int threads = pool.size();
  std::atomic<std::int64_t> done{0};
  std::atomic<int> sink_bits{0};
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  // One chunk per thread; each runs until the deadline.
  pool.parallel_for(threads, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t t = begin; t < end; ++t) {
      float sink = 0;
      std::int64_t mine = 0;
      do {
        mine += rounds(float(t), sink);
      } while (Clock::now() < deadline);
      done += mine;
      sink_bits += sink != 0.0f;
    }
  });
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  return double(done.load()) / elapsed;
}

}  // namespace

MultiplyAddPeak measure_multiply_add_peak(ThreadPool& pool, double seconds) {
  MultiplyAddPeak peak;
  Rounds rounds = sse_rounds;
  peak.instructions = "SSE multiply and add";
#ifdef QUIRE_HAVE_X86_PEAK
  __builtin_cpu_init();
  if (wide_vectors_allowed()) {
    rounds = avx512_rounds;
    peak.instructions = "AVX-512 FMA";
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    rounds = avx2_rounds;
    peak.instructions = "AVX2 FMA";
  }
  if (wide_vnni_allowed()) {
    peak.integer_per_second = measure_rate(pool, vnni_rounds, seconds);
    peak.integer_instructions = "AVX-512 VNNI vpdpwssd";
  }
#endif
  peak.per_second = measure_rate(pool, rounds, seconds);
  return peak;
}

}  // namespace quire::kernels
