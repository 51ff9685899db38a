#include "quire/kernels/cpu/simd.h"

#include <cstdlib>
#include <cstring>

#include "quire/kernels/cpu/half.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define QUIRE_HAVE_F16C_PATH 1
#endif

namespace quire::kernels {
namespace {

void widen_portable(const std::uint16_t* in, std::int64_t count, float* out) {
  std::int64_t i = 0;
  for (; i + 16 <= count; i += 16) {
    for (int k = 0; k < 16; ++k)
      out[i + k] = widen_half(in[i + k]);
  }
  for (; i < count; ++i)
    out[i] = widen_half(in[i]);
}

void round_portable(float* values, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i)
    values[i] = half_to_float(float_to_half(values[i]));
}

#ifdef QUIRE_HAVE_F16C_PATH
// Compiled for F16C whatever the build's baseline; called only where the
// processor reports it. (Neither target_clones nor C++ function versions fit:
// the bodies differ, and Clang cannot version a function on F16C.)
__attribute__((target("avx,f16c"))) void widen_f16c(const std::uint16_t* in, std::int64_t count,
                                                    float* out) {
  std::int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m128i halves = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(halves));
  }
  for (; i < count; ++i)
    out[i] = _cvtsh_ss(in[i]);
}

__attribute__((target("avx,f16c"))) void round_f16c(float* values, std::int64_t count) {
  std::int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m128i halves = _mm256_cvtps_ph(_mm256_loadu_ps(values + i), _MM_FROUND_TO_NEAREST_INT);
    _mm256_storeu_ps(values + i, _mm256_cvtph_ps(halves));
  }
  for (; i < count; ++i)
    values[i] = _cvtsh_ss(_cvtss_sh(values[i], _MM_FROUND_TO_NEAREST_INT));
}
#endif

using Widen = void (*)(const std::uint16_t*, std::int64_t, float*);

Widen choose_widen() {
#ifdef QUIRE_HAVE_F16C_PATH
  if (processor_has_f16c()) return widen_f16c;
#endif
  return widen_portable;
}

using Round = void (*)(float*, std::int64_t);

Round choose_round() {
#ifdef QUIRE_HAVE_F16C_PATH
  if (processor_has_f16c()) return round_f16c;
#endif
  return round_portable;
}

}  // namespace

bool processor_has_f16c() {
#ifdef QUIRE_HAVE_F16C_PATH
  __builtin_cpu_init();
  // F16C from CPUID leaf 1 (ECX bit 29): Clang before 15 has no "f16c" for
  // __builtin_cpu_supports. AVX's check includes the OS saving its registers.
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __builtin_cpu_supports("avx") && __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 &&
         (ecx & bit_F16C) != 0;
#else
  return false;
#endif
}

const char* vectorized_clone_name() {
#if defined(__x86_64__) && defined(__ELF__) && defined(__GNUC__) && !defined(__clang__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return "vectorized loops (x86-64-v3 clone)";
#endif
  return "vectorized loops (baseline)";
}

bool wide_vectors_allowed() {
  static const bool allowed = [] {
    if (const char* cap = std::getenv("QUIRE_CPU_VECTOR_BITS"); cap && *cap) {
      if (std::strtol(cap, nullptr, 10) < 512) return false;
    }
#ifdef QUIRE_HAVE_F16C_PATH
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#else
    return false;
#endif
  }();
  return allowed;
}

bool wide_vnni_allowed() {
  static const bool allowed = [] {
    if (const char* vnni = std::getenv("QUIRE_CPU_VNNI"); vnni && std::strcmp(vnni, "0") == 0)
      return false;
#ifdef QUIRE_HAVE_F16C_PATH
    return wide_vectors_allowed() && __builtin_cpu_supports("avx512vnni");
#else
    return false;
#endif
  }();
  return allowed;
}

void widen_halves(const std::uint16_t* in, std::int64_t count, float* out) {
  static const Widen widen = choose_widen();
  widen(in, count, out);
}

void round_through_halves(float* values, std::int64_t count) {
  static const Round round = choose_round();
  round(values, count);
}

}  // namespace quire::kernels
