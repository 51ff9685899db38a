#include "quire/kernels/top_logits.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace quire::kernels {
namespace {

// An unsigned key that orders like the float: larger logit, larger key. -0
// maps to +0's key (they compare equal as floats, and the sampler breaks
// their tie by id), and every NaN to 0, below -inf. The CUDA op uses the
// same mapping (sampling_candidates.cu).
std::uint32_t rank_key(float logit) {
  if (std::isnan(logit)) return 0;
  if (logit == 0.0f) logit = 0.0f;
  const auto bits = std::bit_cast<std::uint32_t>(logit);
  return (bits & 0x80000000u) != 0 ? ~bits : bits | 0x80000000u;
}

}  // namespace

void check_top_logits(std::int64_t rows, std::int64_t vocab, int k) {
  if (rows < 0) throw std::invalid_argument("top_logits: a negative number of rows");
  if (vocab > std::numeric_limits<std::int32_t>::max()) {
    throw std::invalid_argument("top_logits: a vocabulary of " + std::to_string(vocab) +
                                " has ids beyond 32 bits");
  }
  if (k < 1 || k > kMaxTopLogits || k > vocab) {
    throw std::invalid_argument("top_logits: k = " + std::to_string(k) +
                                " must lie between 1 and min(vocabulary " + std::to_string(vocab) +
                                ", " + std::to_string(kMaxTopLogits) + ")");
  }
}

void top_logits_host(const float* logits, std::int64_t rows, std::int64_t vocab, int k,
                     const float* inv_temperatures, float* values, std::int32_t* ids,
                     TopLogitsStats* stats) {
  check_top_logits(rows, vocab, k);
  std::vector<std::int32_t> order(static_cast<std::size_t>(vocab));
  std::vector<std::uint32_t> keys(static_cast<std::size_t>(vocab));
  std::vector<char> returned(static_cast<std::size_t>(vocab));
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* row = logits + r * vocab;
    TopLogitsStats s;
    for (std::int64_t i = 0; i < vocab; ++i) {
      const float logit = row[i];
      keys[static_cast<std::size_t>(i)] = rank_key(logit);
      order[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i);
      if (std::isnan(logit)) {
        ++s.nans;
      } else if (logit != -std::numeric_limits<float>::infinity()) {
        ++s.finite;
      }
    }
    const auto ranks_before = [&keys](std::int32_t a, std::int32_t b) {
      const std::uint32_t key_a = keys[static_cast<std::size_t>(a)];
      const std::uint32_t key_b = keys[static_cast<std::size_t>(b)];
      return key_a != key_b ? key_a > key_b : a < b;
    };
    const auto top = order.begin() + k;
    std::nth_element(order.begin(), top, order.end(), ranks_before);
    std::sort(order.begin(), top, ranks_before);
    std::fill(returned.begin(), returned.end(), 0);
    for (int j = 0; j < k; ++j) {
      const std::int32_t id = order[static_cast<std::size_t>(j)];
      values[r * k + j] = row[id];
      ids[r * k + j] = id;
      returned[static_cast<std::size_t>(id)] = 1;
    }
    const float maximum = values[r * k];
    if (std::isfinite(maximum)) {
      const float inv_temperature = inv_temperatures[r];
      double sum = 0;
      for (std::int64_t i = 0; i < vocab; ++i) {
        const float logit = row[i];
        if (returned[static_cast<std::size_t>(i)] || std::isnan(logit)) continue;
        // The same float argument as the device computes; exp(-inf) is 0.
        sum += std::exp(static_cast<double>((logit - maximum) * inv_temperature));
      }
      s.tail_sum = static_cast<float>(sum);
    }
    stats[r] = s;
  }
}

void gather_logits_host(const float* logits, std::int64_t row_count, std::int64_t vocab,
                        const std::int32_t* rows, const std::int32_t* ids, std::int64_t count,
                        float* out) {
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int64_t row = rows[i];
    const std::int64_t id = ids[i];
    out[i] = row >= 0 && row < row_count && id >= 0 && id < vocab
                 ? logits[row * vocab + id]
                 : std::numeric_limits<float>::quiet_NaN();
  }
}

}  // namespace quire::kernels
