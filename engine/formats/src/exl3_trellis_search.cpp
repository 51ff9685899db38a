#include "quire/engine/formats/exl3_trellis_search.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "quire/kernels/cpu/exl3_trellis.h"
#include "quire/kernels/cpu/simd.h"

namespace quire::engine::formats {
namespace {

// The cost of a node no path reaches yet: large enough that any real path
// wins, small enough that adding squared errors to it stays finite.
constexpr float kUnreached = 1e30f;

// One position of the search at K bits: for every node n (the low 16 - K
// bits of the position's state), the cheapest of the 2^K states
// (top << (16 - K)) | n, each costing the path into its predecessor node
// (state >> K) plus its own squared error. `next` gets the costs, `choices`
// the winning top bits.
//
// Written with GCC's vector types of W floats rather than left to the
// vectorizer, which turns the running minimum into masked stores behind a
// branch per vector, taken whenever a branch wins some lanes: mispredicted
// so often that the step ran five times slower.
// Blocks of 4 W nodes keep their minimum in registers while the 2^K
// branches stream past: each branch reads the codebook's contiguous row and
// its predecessors' costs, broadcast where 2^K >= W nodes share one, else
// loaded together and spread over the lanes by one permutation (lane i takes
// predecessor i >> K), which reads up to W - 1 costs beyond the last node.
//
// GCC vector types of W floats and of W 32-bit integers (their comparisons'
// results).
template <int W>
struct Lanes;
template <>
struct Lanes<4> {
  typedef float Floats __attribute__((vector_size(16)));
  typedef std::int32_t Ints __attribute__((vector_size(16)));
};
template <>
struct Lanes<8> {
  typedef float Floats __attribute__((vector_size(32)));
  typedef std::int32_t Ints __attribute__((vector_size(32)));
};
template <>
struct Lanes<16> {
  typedef float Floats __attribute__((vector_size(64)));
  typedef std::int32_t Ints __attribute__((vector_size(64)));
};

// The step reads and writes only whole rows whose sizes the search fixes
// (nodes plus a vector's padding), so sanitizers stay out of it: their
// checks of every vector access made it twenty times slower, minutes of a
// sanitized test run.
#define QUIRE_SEARCH_UNCHECKED __attribute__((no_sanitize("address", "undefined")))

template <int K, int W>
QUIRE_SEARCH_UNCHECKED QUIRE_CPU_INLINE void search_step(const float* __restrict previous,
                                                         const float* __restrict values,
                                                         float target, float* __restrict next,
                                                         std::uint8_t* __restrict choices) {
  using F = typename Lanes<W>::Floats;
  using I = typename Lanes<W>::Ints;
  constexpr int kRest = 16 - K;
  constexpr int kNodes = 1 << kRest;
  constexpr int kBranches = 1 << K;
  constexpr int kVectors = 4;
  constexpr int kBlock = kVectors * W;
  constexpr bool kSpread = kBranches < W;
  I spread{};
  for (int lane = 0; lane < W; ++lane)
    spread[lane] = lane >> K;
  const F wanted = F{} + target;
  for (int block = 0; block < kNodes; block += kBlock) {
    F best[kVectors];
    I winner[kVectors];
    for (int v = 0; v < kVectors; ++v) {
      best[v] = F{} + 2 * kUnreached;
      winner[v] = I{};
    }
    for (int top = 0; top < kBranches; ++top) {
      const float* row = values + (top << kRest) + block;
      const I branch = I{} + top;
      for (int v = 0; v < kVectors; ++v) {
        F base;
        const float* from = previous + (top << (kRest - K)) + ((block + v * W) >> K);
        if constexpr (kSpread) {
          std::memcpy(&base, from, sizeof(F));
#if defined(__clang__)
          // Clang has no __builtin_shuffle with a variable mask.
          const F loaded = base;
          for (int lane = 0; lane < W; ++lane)
            base[lane] = loaded[spread[lane]];
#else
          base = __builtin_shuffle(base, spread);
#endif
        } else {
          base = F{} + *from;
        }
        F value;
        std::memcpy(&value, row + v * W, sizeof(F));
        const F error = value - wanted;
        const F cost = base + error * error;
        const I better = cost < best[v];
        best[v] = better ? cost : best[v];
        winner[v] = better ? branch : winner[v];
      }
    }
    for (int v = 0; v < kVectors; ++v) {
      std::memcpy(next + block + v * W, &best[v], sizeof(F));
      for (int j = 0; j < W; ++j)
        choices[block + v * W + j] = static_cast<std::uint8_t>(winner[v][j]);
    }
  }
}

using StepFunction = void (*)(const float*, const float*, float, float*, std::uint8_t*);

// The step at each width, for processors with AVX-512 (16 floats a vector),
// with AVX2 (8) and without (4).
#if defined(__x86_64__) && defined(__GNUC__)
template <int K>
[[gnu::target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")]] QUIRE_SEARCH_UNCHECKED void
step_wide(const float* previous, const float* values, float target, float* next,
          std::uint8_t* choices) {
  search_step<K, 16>(previous, values, target, next, choices);
}
template <int K>
[[gnu::target("avx2,fma")]] QUIRE_SEARCH_UNCHECKED void step_avx2(const float* previous,
                                                                  const float* values, float target,
                                                                  float* next,
                                                                  std::uint8_t* choices) {
  search_step<K, 8>(previous, values, target, next, choices);
}
#endif
template <int K>
QUIRE_SEARCH_UNCHECKED void step_plain(const float* previous, const float* values, float target,
                                       float* next, std::uint8_t* choices) {
  search_step<K, 4>(previous, values, target, next, choices);
}

bool has_avx2() {
#if defined(__x86_64__) && defined(__GNUC__)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

bool has_avx512() {
#if defined(__x86_64__) && defined(__GNUC__)
  return has_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#else
  return false;
#endif
}

template <int K>
StepFunction step_at(int lanes) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (lanes == 16) return step_wide<K>;
  if (lanes == 8) return step_avx2<K>;
#endif
  return step_plain<K>;
}

StepFunction step_for(int bits, int lanes) {
  switch (bits) {
    case 1:
      return step_at<1>(lanes);
    case 2:
      return step_at<2>(lanes);
    case 3:
      return step_at<3>(lanes);
    case 4:
      return step_at<4>(lanes);
    case 5:
      return step_at<5>(lanes);
    case 6:
      return step_at<6>(lanes);
    case 7:
      return step_at<7>(lanes);
    default:
      return step_at<8>(lanes);
  }
}

}  // namespace

Exl3TrellisSearch::Exl3TrellisSearch(int bits, kernels::Exl3Codebook codebook, int lanes)
    : bits_(bits), codebook_(codebook) {
  if (bits < kernels::kExl3MinBits || bits > kernels::kExl3MaxBits) {
    throw std::invalid_argument("EXL3 codes 1 to 8 bits per weight, not " + std::to_string(bits));
  }
  if (lanes == 0) lanes = kernels::wide_vectors_allowed() ? 16 : has_avx2() ? 8 : 4;
  const bool runs = lanes == 4 || (lanes == 8 && has_avx2()) || (lanes == 16 && has_avx512());
  if (!runs) {
    throw std::invalid_argument("EXL3 search: this processor has no vectors of " +
                                std::to_string(lanes) + " floats");
  }
  nodes_ = std::size_t{1} << (16 - bits);
  values_ = kernels::exl3_codebook_table(codebook);
  // Room for the step's reads of a whole vector past the last node.
  current_.resize(nodes_ + 16);
  next_.resize(nodes_ + 16);
  step_ = step_for(bits, lanes);
  open_.assign(nodes_, 0.0f);
  closed_.assign(nodes_, kUnreached);
}

void Exl3TrellisSearch::check(std::span<const float> targets, std::size_t states,
                              std::size_t decoded) const {
  if (targets.size() * std::size_t(bits_) < 16) {
    throw std::invalid_argument("an EXL3 stream of " + std::to_string(targets.size()) +
                                " positions at " + std::to_string(bits_) +
                                " bits is shorter than a 16-bit state");
  }
  if (states != targets.size() || decoded != targets.size()) {
    throw std::invalid_argument("EXL3 search: states and values must match the positions");
  }
}

void Exl3TrellisSearch::run(std::span<const float> targets, std::size_t first,
                            const std::vector<float>& start) {
  const std::size_t count = targets.size();
  choices_.resize(count * nodes_);
  std::copy(start.begin(), start.end(), current_.begin());
  for (std::size_t r = 0; r < count; ++r) {
    const float target = targets[(first + r) % count];
    step_(current_.data(), values_, target, next_.data(), choices_.data() + r * nodes_);
    current_.swap(next_);
  }
}

void Exl3TrellisSearch::trace_back(std::size_t count, std::size_t first, std::uint32_t node,
                                   std::span<std::uint16_t> states) const {
  const int rest = 16 - bits_;
  for (std::size_t r = count; r-- > 0;) {
    const std::uint32_t top = choices_[r * nodes_ + node];
    const std::uint32_t state = (top << rest) | node;
    states[(first + r) % count] = static_cast<std::uint16_t>(state);
    node = state >> bits_;
  }
}

double Exl3TrellisSearch::finish(std::span<const float> targets,
                                 std::span<const std::uint16_t> states,
                                 std::span<float> decoded) const {
  double error = 0.0;
  for (std::size_t t = 0; t < targets.size(); ++t) {
    decoded[t] = values_[states[t]];
    const double difference = double(decoded[t]) - double(targets[t]);
    error += difference * difference;
  }
  return error;
}

std::uint32_t Exl3TrellisSearch::middle_start_node(std::span<const float> targets) {
  check(targets, targets.size(), targets.size());
  const std::size_t count = targets.size();
  const std::size_t first = count / 2;
  run(targets, first, open_);
  const auto best = std::min_element(current_.begin(), current_.begin() + std::ptrdiff_t(nodes_)) -
                    current_.begin();
  std::vector<std::uint16_t> states(count);
  trace_back(count, first, static_cast<std::uint32_t>(best), states);
  // The node before position 0 is the top of position 0's state.
  return std::uint32_t{states[0]} >> bits_;
}

double Exl3TrellisSearch::encode_through(std::span<const float> targets, std::uint32_t node,
                                         std::span<std::uint16_t> states,
                                         std::span<float> decoded) {
  check(targets, states.size(), decoded.size());
  if (node >= nodes_) {
    throw std::invalid_argument("EXL3 search: node " + std::to_string(node) + " does not fit " +
                                std::to_string(16 - bits_) + " bits");
  }
  closed_[node] = 0.0f;
  run(targets, 0, closed_);
  closed_[node] = kUnreached;
  trace_back(targets.size(), 0, node, states);
  return finish(targets, states, decoded);
}

double Exl3TrellisSearch::encode(std::span<const float> targets, std::span<std::uint16_t> states,
                                 std::span<float> decoded) {
  return encode_through(targets, middle_start_node(targets), states, decoded);
}

}  // namespace quire::engine::formats
