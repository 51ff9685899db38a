#pragma once

// Private to test_cuda_kv.cpp: its tolerances, random inputs, page layouts
// and the host-side batches it runs through both backends.

#include <QByteArray>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "cuda_test_support.h"
#include "quire/kernels/cpu/cpu_backend.h"

namespace quire::test::cuda_kv {

using namespace quire::kernels;

constexpr int kDevice = quire::test::kCudaTestDevice;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
// Attention accumulates in FP32 on both sides, over the same decoded values;
// only the order of the sums and the exponential differ. So: |gpu - cpu| <=
// kAbsolute + kRelative * |cpu| for every output element.
constexpr float kRelative = 2e-4f;
constexpr float kAbsolute = 2e-5f;

struct CodingPair {
  KvCoding key;
  KvCoding value;
};

inline CodingPair coding_pair(const QByteArray& name) {
  if (name == "q8") return {KvCoding::Int8, KvCoding::Int8};
  if (name == "q6") return {KvCoding::Int8, KvCoding::Int4};
  if (name == "q4") return {KvCoding::Int4, KvCoding::Int4};
  if (name == "fp8") return {KvCoding::Fp8, KvCoding::Fp8};
  return {KvCoding::Fp16, KvCoding::Fp16};
}

const char* const kCodings[] = {"fp16", "q8", "q6", "q4", "fp8"};

inline bool integer_coding(const QByteArray& name) {
  return name == "q8" || name == "q6" || name == "q4";
}

inline std::vector<float> uniform(std::size_t count, float low, float high, std::mt19937& rng) {
  std::uniform_real_distribution<float> distribution(low, high);
  std::vector<float> values(count);
  for (float& v : values)
    v = distribution(rng);
  return values;
}

// One layer's four planes on one backend.
struct KvLayer {
  KvLayerLayout layout;
  DeviceBuffer planes[4];  // key data, key scales, value data, value scales

  std::int64_t plane_bytes(int i) const {
    const std::int64_t page[4] = {layout.key_data_page_bytes, layout.key_scale_page_bytes,
                                  layout.value_data_page_bytes, layout.value_scale_page_bytes};
    return page[i] * layout.num_pages;
  }
  KvLayerView view() const {
    return KvLayerView{
        layout, KvPlanes{planes[0].data(), planes[1].data(), planes[2].data(), planes[3].data()}};
  }
};

inline KvLayer make_layer(Backend& backend, const KvLayerLayout& layout) {
  KvLayer layer{layout, {}};
  for (int i = 0; i < 4; ++i) {
    const std::int64_t bytes = layer.plane_bytes(i);
    if (bytes > 0) layer.planes[i] = backend.allocate(kDevice, std::size_t(bytes), "test K/V");
  }
  return layer;
}

inline std::vector<std::uint8_t> download(Backend& backend, const DeviceBuffer& buffer,
                                          std::int64_t bytes) {
  backend.synchronize(kDevice);
  std::vector<std::uint8_t> host(static_cast<std::size_t>(bytes));
  if (bytes > 0) backend.copy(host.data(), -1, buffer.data(), kDevice, host.size());
  return host;
}

// The GPU layer takes the CPU layer's bytes.
inline void clone_pages(CpuBackend& cpu, const KvLayer& from, Backend& gpu, KvLayer& to) {
  for (int i = 0; i < 4; ++i) {
    const std::vector<std::uint8_t> bytes = download(cpu, from.planes[i], from.plane_bytes(i));
    if (!bytes.empty()) gpu.copy(to.planes[i].data(), kDevice, bytes.data(), -1, bytes.size());
  }
}

inline void expect_same_pages(CpuBackend& cpu, const KvLayer& cpu_layer, Backend& gpu,
                              const KvLayer& gpu_layer, const char* what) {
  static const char* const kPlanes[4] = {"key data", "key scales", "value data", "value scales"};
  for (int i = 0; i < 4; ++i) {
    const std::vector<std::uint8_t> expected =
        download(cpu, cpu_layer.planes[i], cpu_layer.plane_bytes(i));
    const std::vector<std::uint8_t> actual =
        download(gpu, gpu_layer.planes[i], gpu_layer.plane_bytes(i));
    const auto mismatch = std::mismatch(expected.begin(), expected.end(), actual.begin());
    if (mismatch.first != expected.end()) {
      const auto at = mismatch.first - expected.begin();
      const std::int64_t page_bytes = cpu_layer.plane_bytes(i) / cpu_layer.layout.num_pages;
      QFAIL(qPrintable(QStringLiteral("%1: %2 differ at page %3, byte %4: GPU %5, CPU %6")
                           .arg(QLatin1String(what), QLatin1String(kPlanes[i]))
                           .arg(at / page_bytes)
                           .arg(at % page_bytes)
                           .arg(int(*mismatch.second))
                           .arg(int(*mismatch.first))));
    }
  }
}

inline void expect_close(const std::vector<float>& cpu, const std::vector<float>& gpu,
                         const char* what) {
  QCOMPARE(gpu.size(), cpu.size());
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    const float limit = kAbsolute + kRelative * std::fabs(cpu[i]);
    if (std::isnan(gpu[i]) || std::fabs(cpu[i] - gpu[i]) > limit) {
      QFAIL(qPrintable(QStringLiteral("%1: element %2 is %3 on the GPU, %4 on the CPU (limit %5)")
                           .arg(QLatin1String(what))
                           .arg(i)
                           .arg(double(gpu[i]), 0, 'g', 9)
                           .arg(double(cpu[i]), 0, 'g', 9)
                           .arg(double(limit), 0, 'g', 3)));
    }
  }
}

// A batch's metadata in host memory: token t is of sequence sequence[t] at
// position[t]; tables holds max_pages entries per sequence, -1 past its pages.
struct HostBatch {
  std::vector<std::int32_t> sequence, position, tables;
  int max_pages = 1;

  std::int64_t tokens() const { return std::int64_t(sequence.size()); }
  TokenBatch view() const {
    return TokenBatch{sequence.data(), position.data(), tables.data(), tokens(), max_pages};
  }
};

inline HostBatch make_tables(const std::vector<std::vector<std::int32_t>>& pages) {
  HostBatch batch;
  for (const auto& list : pages)
    batch.max_pages = std::max(batch.max_pages, int(list.size()));
  batch.tables.assign(pages.size() * std::size_t(batch.max_pages), -1);
  for (std::size_t s = 0; s < pages.size(); ++s)
    std::copy(pages[s].begin(), pages[s].end(),
              batch.tables.begin() + std::ptrdiff_t(s * std::size_t(batch.max_pages)));
  return batch;
}

inline void add_tokens(HostBatch& batch, int sequence, int first, int count) {
  for (int i = 0; i < count; ++i) {
    batch.sequence.push_back(sequence);
    batch.position.push_back(first + i);
  }
}

// Page indices 0 .. count-1 in random order, dealt to sequences of the given
// lengths (whole pages each, the last one partial).
inline std::vector<std::vector<std::int32_t>> deal_pages(const std::vector<int>& lengths,
                                                         int page_size, int num_pages,
                                                         std::mt19937& rng) {
  std::vector<std::int32_t> pool(static_cast<std::size_t>(num_pages));
  std::iota(pool.begin(), pool.end(), 0);
  std::shuffle(pool.begin(), pool.end(), rng);
  std::vector<std::vector<std::int32_t>> pages;
  std::size_t next = 0;
  for (const int length : lengths) {
    const int count = (length + page_size - 1) / page_size;
    pages.emplace_back(pool.begin() + std::ptrdiff_t(next),
                       pool.begin() + std::ptrdiff_t(next + std::size_t(count)));
    next += std::size_t(count);
  }
  return pages;
}

inline int pages_needed(const std::vector<int>& lengths, int page_size) {
  int total = 0;
  for (const int length : lengths)
    total += (length + page_size - 1) / page_size;
  return total;
}

}  // namespace quire::test::cuda_kv
