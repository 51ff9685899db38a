#include "quire/kernels/cpu/memory_read_rate.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <vector>

#include "quire/kernels/cpu/simd.h"

namespace quire::kernels {
namespace {

// Sums the words of [begin, end) in eight independent lanes, which the
// compiler turns into vector loads and adds: the loop reads as fast as the
// memory delivers. Integer sums, so no reassociation is needed to vectorize.
QUIRE_CPU_CLONES std::uint64_t sum_words(const std::uint64_t* begin, const std::uint64_t* end) {
  std::uint64_t lanes[8] = {};
  const std::uint64_t* p = begin;
  for (; p + 8 <= end; p += 8) {
    for (int i = 0; i < 8; ++i)
      lanes[i] += p[i];
  }
  std::uint64_t total = 0;
  for (; p < end; ++p)
    total += *p;
  for (const std::uint64_t lane : lanes)
    total += lane;
  return total;
}

}  // namespace

double measure_read_bandwidth(ThreadPool& pool, std::size_t bytes) {
  using Clock = std::chrono::steady_clock;
  const std::size_t words = std::max<std::size_t>(bytes / sizeof(std::uint64_t), 1);
  std::vector<std::uint64_t> buffer(words, 1);
  const auto threads = static_cast<std::int64_t>(pool.size());
  std::atomic<std::uint64_t> sink{0};
  double best = 0;
  // The best of several passes: a ceiling, and passes on a shared machine
  // scatter. The first also brings the pages in.
  for (int pass = 0; pass < 6; ++pass) {
    const Clock::time_point start = Clock::now();
    pool.parallel_for(threads, 1, [&](std::int64_t first, std::int64_t last) {
      for (std::int64_t t = first; t < last; ++t) {
        const std::size_t begin = words * std::size_t(t) / std::size_t(threads);
        const std::size_t end = words * std::size_t(t + 1) / std::size_t(threads);
        sink += sum_words(buffer.data() + begin, buffer.data() + end);
      }
    });
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (pass > 0) best = std::max(best, double(words * sizeof(std::uint64_t)) / seconds);
  }
  return sink.load() == 0 ? 0.0 : best;
}

}  // namespace quire::kernels
