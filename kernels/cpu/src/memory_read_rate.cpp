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
  std::vector<double> rates;
  // The median of several passes, the first left out (it brings the pages
  // in). Not the best: on a shared virtual machine two threads' reads came
  // out anywhere from 24 to 58 GB/s within a minute, and the best pass is no
  // bound for a decode that runs for seconds.
  for (int pass = 0; pass < 8; ++pass) {
    const Clock::time_point start = Clock::now();
    pool.parallel_for(threads, 1, [&](std::int64_t first, std::int64_t last) {
      for (std::int64_t t = first; t < last; ++t) {
        const std::size_t begin = words * std::size_t(t) / std::size_t(threads);
        const std::size_t end = words * std::size_t(t + 1) / std::size_t(threads);
        sink += sum_words(buffer.data() + begin, buffer.data() + end);
      }
    });
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (pass > 0) rates.push_back(double(words * sizeof(std::uint64_t)) / seconds);
  }
  std::sort(rates.begin(), rates.end());
  return sink.load() == 0 ? 0.0 : rates[rates.size() / 2];
}

}  // namespace quire::kernels
