#pragma once

#include <string>

#include "quire/kernels/cpu/thread_pool.h"

namespace quire::kernels {

// The processor's measured peak of FP32 multiply-adds per second over the
// threads of `pool`: every thread runs independent fused multiply-adds in the
// widest registers the products use here (512 bits where AVX-512 is allowed,
// 256 with AVX2 and FMA, else 128-bit SSE multiplies and adds) for about
// `seconds`. A benchmark divides its products' rate by this to say how much of
// the machine a prefill used.
struct MultiplyAddPeak {
  double per_second = 0;
  std::string instructions;  // "AVX-512 FMA", "AVX2 FMA" or "SSE multiply and add"
  // Where the processor has AVX-512 VNNI (and 512 bits are allowed): the
  // peak of the 16-bit integer multiply-adds the EXL2 integer tiles use,
  // 32 per vpdpwssd; 0 elsewhere.
  double integer_per_second = 0;
  std::string integer_instructions;
};
MultiplyAddPeak measure_multiply_add_peak(ThreadPool& pool, double seconds = 0.2);

}  // namespace quire::kernels
