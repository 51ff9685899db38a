// Every op the CUDA backend implements against the CPU backend (linear in
// test_cuda_linear.cpp, the paged K/V ops in test_cuda_kv.cpp), on fresh
// random inputs (the seed is printed), odd sizes, and outputs poisoned with
// NaN before each run so that an element the kernel never writes cannot pass.
// Needs a GPU: registered under the label "gpu", and skipped when the backend
// cannot run.

#include <QTest>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cuda_test_support.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "quire/kernels/cpu/half.h"
#include "test_main.h"

using namespace quire::kernels;

namespace {

constexpr int kDevice = quire::test::kCudaTestDevice;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

std::vector<float> uniform(std::size_t count, float low, float high, std::mt19937& rng) {
  std::uniform_real_distribution<float> distribution(low, high);
  std::vector<float> values(count);
  for (float& v : values)
    v = distribution(rng);
  return values;
}

// The table or weight in `type`, rounded from `values`; `values` becomes what
// the rounded elements are worth, so both backends see the same numbers.
std::vector<std::uint8_t> encode(std::vector<float>& values, DType type) {
  std::vector<std::uint8_t> bytes(values.size() * dtype_size(type));
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (type == DType::F32) {
      std::memcpy(bytes.data() + 4 * i, &values[i], 4);
      continue;
    }
    const std::uint16_t bits =
        type == DType::F16 ? float_to_half(values[i]) : float_to_bf16(values[i]);
    values[i] = type == DType::F16 ? half_to_float(bits) : bf16_to_float(bits);
    std::memcpy(bytes.data() + 2 * i, &bits, 2);
  }
  return bytes;
}

// |cpu - gpu| <= absolute + relative * |cpu| for every element, and no NaN.
void expect_close(const std::vector<float>& cpu, const std::vector<float>& gpu, float absolute,
                  float relative, const char* what) {
  QCOMPARE(gpu.size(), cpu.size());
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    const float limit = absolute + relative * std::fabs(cpu[i]);
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

}  // namespace

class CudaOpsTest : public QObject {
  Q_OBJECT

 public:
  template <typename T>
  DeviceBuffer upload(const std::vector<T>& host) {
    return quire::test::upload_to_gpu(*gpu_, host);
  }

  DeviceBuffer poisoned(std::size_t count) { return upload(std::vector<float>(count, kNaN)); }

  std::vector<float> download(const DeviceBuffer& buffer, std::size_t count) {
    return quire::test::download_floats(*gpu_, buffer, count);
  }

 private slots:
  void initTestCase() {
    QString why_not;
    gpu_ = quire::test::start_cuda_backend(rng_, why_not);
    if (!gpu_) QSKIP(qPrintable(why_not));
  }

  void cleanupTestCase() { gpu_.reset(); }

  void devicesAndMemory() {
    const std::vector<DeviceInfo> devices = gpu_->devices();
    QVERIFY(!devices.empty());
    for (const DeviceInfo& device : devices) {
      QVERIFY(!device.name.empty());
      QVERIFY(device.free_bytes > 0 && device.free_bytes <= device.total_bytes);
      QVERIFY(device.recommended_reserve_bytes >= std::int64_t{512} << 20);
    }
    const std::vector<float> values = uniform(1000003, -5.0f, 5.0f, rng_);
    DeviceBuffer a = upload(values);
    DeviceBuffer b = poisoned(values.size());
    gpu_->copy(b.data(), kDevice, a.data(), kDevice, values.size() * sizeof(float));
    QVERIFY(download(b, values.size()) == values);
    gpu_->fill_zero(kDevice, b.data(), b.bytes());
    QVERIFY(download(b, values.size()) == std::vector<float>(values.size(), 0.0f));
    if (devices.size() > 1) {
      DeviceBuffer other = gpu_->allocate(1, a.bytes(), "test data");
      gpu_->copy(other.data(), 1, a.data(), kDevice, a.bytes());
      gpu_->copy(b.data(), kDevice, other.data(), 1, a.bytes());
      QVERIFY(download(b, values.size()) == values);
    }
    QVERIFY_THROWS_EXCEPTION(std::out_of_range,
                             gpu_->allocate(static_cast<int>(devices.size()), 16, "test data"));
  }

  void allocationBeyondTheDeviceSaysHowMuchIsMissing() {
    const DeviceInfo device = gpu_->devices()[kDevice];
    try {
      gpu_->allocate(kDevice, static_cast<std::size_t>(device.total_bytes) * 2, "cache");
      QFAIL("an allocation of twice the device's memory succeeded");
    } catch (const DeviceOutOfMemory& error) {
      QCOMPARE(error.device(), kDevice);
      const std::string message = error.what();
      QVERIFY2(message.starts_with("device 0: needs ") &&
                   message.find("for the cache") != std::string::npos,
               error.what());
    }
  }

  void embedding_data() {
    QTest::addColumn<int>("type");
    QTest::addColumn<int>("vocab");
    QTest::addColumn<int>("hidden");
    QTest::addColumn<int>("count");
    for (DType type : {DType::F32, DType::F16, DType::BF16}) {
      const std::string name(dtype_name(type));
      QTest::addRow("%s one of one", name.c_str()) << int(type) << 1 << 1 << 1;
      QTest::addRow("%s 17 tokens of 333", name.c_str()) << int(type) << 1000 << 333 << 17;
      QTest::addRow("%s 3 wide rows", name.c_str()) << int(type) << 50 << 4099 << 3;
      QTest::addRow("%s 70000 tokens", name.c_str()) << int(type) << 7 << 5 << 70000;
    }
  }

  // Widening is exact: the GPU must give the very same floats.
  void embedding() {
    QFETCH(int, type);
    QFETCH(int, vocab);
    QFETCH(int, hidden);
    QFETCH(int, count);
    const DType dtype = static_cast<DType>(type);
    std::vector<float> values = uniform(std::size_t(vocab) * hidden, -3.0f, 3.0f, rng_);
    const std::vector<std::uint8_t> table = encode(values, dtype);
    std::vector<std::int32_t> tokens(static_cast<std::size_t>(count));
    std::uniform_int_distribution<std::int32_t> pick(0, vocab - 1);
    for (std::int32_t& token : tokens)
      token = pick(rng_);
    tokens.front() = vocab - 1;  // the last row of the table, too

    CpuBackend cpu;
    std::vector<float> expected(std::size_t(count) * hidden, kNaN);
    cpu.embedding(0, DenseWeight{table.data(), dtype}, vocab, hidden, tokens.data(), count,
                  expected.data());
    DeviceBuffer table_gpu = upload(table), tokens_gpu = upload(tokens);
    DeviceBuffer out = poisoned(expected.size());
    gpu_->embedding(kDevice, DenseWeight{table_gpu.data(), dtype}, vocab, hidden,
                    tokens_gpu.as<std::int32_t>(), count, out.as<float>());
    expect_close(expected, download(out, expected.size()), 0.0f, 0.0f, "embedding");
  }

  void embeddingRejectsTokensOutsideTheVocabulary() {
    std::vector<float> values = uniform(10 * 4, -1.0f, 1.0f, rng_);
    DeviceBuffer table = upload(encode(values, DType::F16));
    DeviceBuffer out = poisoned(3 * 4);
    for (const std::int32_t bad : {10, -1}) {
      DeviceBuffer tokens = upload(std::vector<std::int32_t>{1, bad, 2});
      QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                               gpu_->embedding(kDevice, DenseWeight{table.data(), DType::F16}, 10,
                                               4, tokens.as<std::int32_t>(), 3, out.as<float>()));
    }
  }

  void rmsNorm_data() {
    QTest::addColumn<int>("type");
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("cols");
    for (DType type : {DType::F32, DType::F16, DType::BF16}) {
      const std::string name(dtype_name(type));
      QTest::addRow("%s 1x1", name.c_str()) << int(type) << 1 << 1;
      QTest::addRow("%s 3x4097", name.c_str()) << int(type) << 3 << 4097;
      QTest::addRow("%s 129x33", name.c_str()) << int(type) << 129 << 33;
      QTest::addRow("%s 70001x7", name.c_str()) << int(type) << 70001 << 7;
    }
  }

  // Both sum squares in double; only the order differs, which can move the
  // FP32 mean by one unit in the last place, and the output by about two.
  void rmsNorm() {
    QFETCH(int, type);
    QFETCH(int, rows);
    QFETCH(int, cols);
    const DType dtype = static_cast<DType>(type);
    const std::vector<float> x = uniform(std::size_t(rows) * cols, -4.0f, 4.0f, rng_);
    std::vector<float> gamma = uniform(std::size_t(cols), 0.5f, 1.5f, rng_);
    const std::vector<std::uint8_t> weight = encode(gamma, dtype);
    const float eps = 1e-5f;

    CpuBackend cpu;
    std::vector<float> expected(x.size(), kNaN);
    cpu.rms_norm(0, x.data(), DenseWeight{weight.data(), dtype}, eps, rows, cols, expected.data());
    DeviceBuffer x_gpu = upload(x), weight_gpu = upload(weight), out = poisoned(x.size());
    gpu_->rms_norm(kDevice, x_gpu.as<float>(), DenseWeight{weight_gpu.data(), dtype}, eps, rows,
                   cols, out.as<float>());
    expect_close(expected, download(out, x.size()), 1e-6f, 1e-6f, "rms_norm");
    // In place, as the CPU backend allows.
    gpu_->rms_norm(kDevice, x_gpu.as<float>(), DenseWeight{weight_gpu.data(), dtype}, eps, rows,
                   cols, x_gpu.as<float>());
    expect_close(expected, download(x_gpu, x.size()), 1e-6f, 1e-6f, "rms_norm in place");
  }

  void rope_data() {
    QTest::addColumn<int>("tokens");
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("head_dim");
    QTest::addColumn<int>("rotary_dim");
    QTest::addColumn<float>("factor");
    // M-RoPE: 0 none, 1 Qwen2.5-VL's sections, 2 Qwen3-VL's interleaving.
    QTest::addColumn<int>("mrope");
    QTest::addRow("full rotation") << 5 << 3 << 64 << 64 << 1.0f << 0;
    QTest::addRow("partial rotation") << 9 << 2 << 80 << 32 << 1.0f << 0;
    QTest::addRow("one pair, scaled") << 4 << 7 << 6 << 2 << 1.2f << 0;
    QTest::addRow("many tokens, odd heads") << 70001 << 5 << 96 << 96 << 0.9f << 0;
    QTest::addRow("M-RoPE sections") << 333 << 4 << 128 << 128 << 1.0f << 1;
    QTest::addRow("M-RoPE interleaved") << 333 << 4 << 128 << 128 << 1.0f << 2;
  }

  // Same FP32 angle and double-precision cosine and sine on both sides; the
  // GPU's double sincos may differ from glibc's in the last bits of a double,
  // which reaches a float only at a rounding boundary.
  void rope() {
    QFETCH(int, tokens);
    QFETCH(int, heads);
    QFETCH(int, head_dim);
    QFETCH(int, rotary_dim);
    QFETCH(float, factor);
    QFETCH(int, mrope);
    const std::vector<float> x = uniform(std::size_t(tokens) * heads * head_dim, -2.0f, 2.0f, rng_);
    // M-RoPE: three ids per token.
    std::vector<std::int32_t> positions(static_cast<std::size_t>(tokens) * (mrope ? 3 : 1));
    std::uniform_int_distribution<std::int32_t> pick(0, 131071);
    for (std::int32_t& position : positions)
      position = pick(rng_);
    std::vector<float> inv_freq(static_cast<std::size_t>(rotary_dim / 2));
    for (std::size_t i = 0; i < inv_freq.size(); ++i)
      inv_freq[i] = std::pow(10000.0f, -2.0f * float(i) / float(rotary_dim));

    RopeParams rope{inv_freq.data(), rotary_dim, factor};
    if (mrope == 1) rope.mrope_section = {16, 24, 24};
    if (mrope == 2) rope.mrope_section = {24, 20, 20};
    rope.mrope_interleaved = mrope == 2;

    CpuBackend cpu;
    std::vector<float> expected = x;
    cpu.rope(0, expected.data(), tokens, heads, head_dim, positions.data(), rope);
    DeviceBuffer x_gpu = upload(x), positions_gpu = upload(positions);
    DeviceBuffer inv_freq_gpu = upload(inv_freq);
    rope.inv_freq = inv_freq_gpu.as<float>();
    gpu_->rope(kDevice, x_gpu.as<float>(), tokens, heads, head_dim,
               positions_gpu.as<std::int32_t>(), rope);
    expect_close(expected, download(x_gpu, x.size()), 1e-6f, 1e-6f, "rope");

    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             gpu_->rope(kDevice, x_gpu.as<float>(), tokens, heads, head_dim,
                                        positions_gpu.as<std::int32_t>(),
                                        RopeParams{inv_freq_gpu.as<float>(), head_dim + 2, 1.0f}));
  }

  void siluMulAndAdd_data() {
    QTest::addColumn<int>("count");
    QTest::addRow("one") << 1;
    QTest::addRow("1023") << 1023;
    QTest::addRow("a million and 3") << 1000003;
  }

  // silu_mul: CUDA's expf is within 2 units in the last place of the exact
  // value, glibc's within 1; the quotient and product add one rounding each.
  // add: one correctly rounded addition on both sides, so exactly equal.
  void siluMulAndAdd() {
    QFETCH(int, count);
    const std::size_t n = static_cast<std::size_t>(count);
    const std::vector<float> gate = uniform(n, -12.0f, 12.0f, rng_);
    const std::vector<float> up = uniform(n, -3.0f, 3.0f, rng_);

    CpuBackend cpu;
    std::vector<float> expected(n, kNaN);
    cpu.silu_mul(0, gate.data(), up.data(), count, expected.data());
    DeviceBuffer gate_gpu = upload(gate), up_gpu = upload(up), out = poisoned(n);
    gpu_->silu_mul(kDevice, gate_gpu.as<float>(), up_gpu.as<float>(), count, out.as<float>());
    expect_close(expected, download(out, n), 1e-7f, 1e-6f, "silu_mul");

    std::vector<float> sum = gate;
    cpu.add(0, sum.data(), up.data(), count);
    gpu_->add(kDevice, gate_gpu.as<float>(), up_gpu.as<float>(), count);
    expect_close(sum, download(gate_gpu, n), 0.0f, 0.0f, "add");

    // In place and onto itself, as the CPU backend allows.
    cpu.silu_mul(0, up.data(), up.data(), count, expected.data());
    gpu_->silu_mul(kDevice, up_gpu.as<float>(), up_gpu.as<float>(), count, up_gpu.as<float>());
    expect_close(expected, download(up_gpu, n), 1e-7f, 1e-6f, "silu_mul in place");
    cpu.add(0, sum.data(), sum.data(), count);
    gpu_->add(kDevice, gate_gpu.as<float>(), gate_gpu.as<float>(), count);
    expect_close(sum, download(gate_gpu, n), 0.0f, 0.0f, "add onto itself");
  }

  void gatedActivation_data() {
    QTest::addColumn<int>("activation");
    QTest::addColumn<int>("count");
    for (const auto& [name, activation] : {std::pair{"silu", GatedActivation::Silu},
                                           std::pair{"gelu tanh", GatedActivation::GeluTanh}}) {
      QTest::addRow("%s one", name) << int(activation) << 1;
      QTest::addRow("%s 1023", name) << int(activation) << 1023;
      QTest::addRow("%s a million and 3", name) << int(activation) << 1000003;
    }
  }

  // Gates over [-12, 12] and the far ends, where x^3 or e^-2u leave FP32's
  // range. Both sides compute u with the same rounded operations; only expf
  // differs (CUDA's within 2 units in the last place, glibc's within 1), and
  // the quotient and product add one rounding each.
  void gatedActivation() {
    QFETCH(int, activation);
    QFETCH(int, count);
    const auto kind = static_cast<GatedActivation>(activation);
    const std::size_t n = static_cast<std::size_t>(count);
    std::vector<float> gate = uniform(n, -12.0f, 12.0f, rng_);
    const float far[] = {0.0f, -5.4f, -9.0f, -10.5f, -30.0f, 30.0f, -1e20f, 1e20f, -3e38f};
    for (std::size_t i = 0; i < std::size(far) && i < n; ++i)
      gate[n - 1 - i] = far[i];
    const std::vector<float> up = uniform(n, -3.0f, 3.0f, rng_);

    CpuBackend cpu;
    std::vector<float> expected(n, kNaN);
    cpu.gated_activation(0, kind, gate.data(), up.data(), count, expected.data());
    DeviceBuffer gate_gpu = upload(gate), up_gpu = upload(up), out = poisoned(n);
    gpu_->gated_activation(kDevice, kind, gate_gpu.as<float>(), up_gpu.as<float>(), count,
                           out.as<float>());
    expect_close(expected, download(out, n), 1e-30f, 1e-6f, "gated_activation");
    // In place over the gate, as the forward pass runs it.
    gpu_->gated_activation(kDevice, kind, gate_gpu.as<float>(), up_gpu.as<float>(), count,
                           gate_gpu.as<float>());
    expect_close(expected, download(gate_gpu, n), 1e-30f, 1e-6f, "gated_activation in place");
  }

  // cap * tanh(x / cap): the same quotient on both sides, CUDA's tanhf within
  // 2 units in the last place, glibc's within 1. Values near the cap, far
  // beyond it (and infinite), and small ones.
  void softCapAndScale() {
    const std::size_t n = 100003;
    for (const float cap : {30.0f, 50.0f, 1.0f}) {
      std::vector<float> x = uniform(n, -4.0f * cap, 4.0f * cap, rng_);
      const float far[] = {0.0f,  1e-3f, 0.99f, 1.0f,
                           1.01f, 1e3f,  1e30f, std::numeric_limits<float>::infinity()};
      for (std::size_t i = 0; i < std::size(far); ++i) {
        x[2 * i] = far[i] * cap;
        x[2 * i + 1] = -far[i] * cap;
      }
      CpuBackend cpu;
      std::vector<float> expected = x;
      cpu.soft_cap(0, expected.data(), std::int64_t(n), cap);
      DeviceBuffer x_gpu = upload(x);
      gpu_->soft_cap(kDevice, x_gpu.as<float>(), std::int64_t(n), cap);
      expect_close(expected, download(x_gpu, n), 1e-38f, 1e-6f, "soft_cap");
    }
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, gpu_->soft_cap(kDevice, nullptr, 0, 0.0f));

    // One correctly rounded product on both sides: the same floats.
    const std::vector<float> x = uniform(n, -5.0f, 5.0f, rng_);
    for (const float factor : {std::sqrt(3072.0f), -0.5f}) {
      CpuBackend cpu;
      std::vector<float> expected = x;
      cpu.scale(0, expected.data(), std::int64_t(n), factor);
      DeviceBuffer x_gpu = upload(x);
      gpu_->scale(kDevice, x_gpu.as<float>(), std::int64_t(n), factor);
      expect_close(expected, download(x_gpu, n), 0.0f, 0.0f, "scale");
    }
  }

  void copyColumns_data() {
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("width");
    QTest::addColumn<int>("first");
    QTest::addColumn<int>("cols");
    // Phi-3 mini's qkv_proj (3072 queries, 3072 keys and values) and
    // gate_up_proj (two halves of 8192), and odd sizes.
    QTest::addRow("queries of qkv") << 5 << 9216 << 0 << 3072;
    QTest::addRow("values of qkv") << 5 << 9216 << 6144 << 3072;
    QTest::addRow("up half of gate_up") << 3 << 16384 << 8192 << 8192;
    QTest::addRow("odd middle slice, many rows") << 70001 << 13 << 5 << 3;
  }

  // Copies: the very same floats.
  void copyColumns() {
    QFETCH(int, rows);
    QFETCH(int, width);
    QFETCH(int, first);
    QFETCH(int, cols);
    const std::vector<float> x = uniform(std::size_t(rows) * std::size_t(width), -2.0f, 2.0f, rng_);
    CpuBackend cpu;
    const std::size_t count = std::size_t(rows) * std::size_t(cols);
    std::vector<float> expected(count, kNaN);
    cpu.copy_columns(0, x.data(), rows, width, first, cols, expected.data());
    DeviceBuffer x_gpu = upload(x), out = poisoned(count);
    gpu_->copy_columns(kDevice, x_gpu.as<float>(), rows, width, first, cols, out.as<float>());
    expect_close(expected, download(out, count), 0.0f, 0.0f, "copy_columns");
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             gpu_->copy_columns(kDevice, x_gpu.as<float>(), rows, width,
                                                width - cols + 1, cols, out.as<float>()));
  }

  // Tokens routed to three experts and their weighted outputs added back,
  // two experts sharing rows: gathers copy exactly, and each scatter rounds
  // a product and a sum as the CPU does, so the sums are the same floats.
  // A negative row, which the CPU refuses, gathers zeros and scatters nothing.
  void gatherAndScatterRows() {
    const int tokens = 300, cols = 2049;
    const std::vector<float> hidden = uniform(std::size_t(tokens) * cols, -2.0f, 2.0f, rng_);
    std::vector<float> x = uniform(hidden.size(), -1.0f, 1.0f, rng_);
    CpuBackend cpu;
    DeviceBuffer hidden_gpu = upload(hidden), x_gpu = upload(x);
    std::vector<std::int32_t> all(tokens);
    for (int t = 0; t < tokens; ++t)
      all[std::size_t(t)] = t;
    for (const int count : {117, 41, 1}) {
      std::shuffle(all.begin(), all.end(), rng_);
      const std::vector<std::int32_t> rows(all.begin(), all.begin() + count);
      const std::size_t n = std::size_t(count) * cols;
      std::vector<float> routed(n, kNaN);
      cpu.gather_rows(0, hidden.data(), cols, rows.data(), count, routed.data());
      DeviceBuffer rows_gpu = upload(rows), routed_gpu = poisoned(n);
      gpu_->gather_rows(kDevice, hidden_gpu.as<float>(), cols, rows_gpu.as<std::int32_t>(), count,
                        routed_gpu.as<float>());
      expect_close(routed, download(routed_gpu, n), 0.0f, 0.0f, "gather_rows");

      const std::vector<float> y = uniform(n, -3.0f, 3.0f, rng_);
      const std::vector<float> weights = uniform(std::size_t(count), 0.0f, 1.0f, rng_);
      cpu.scatter_add_rows(0, x.data(), cols, y.data(), rows.data(), weights.data(), count);
      DeviceBuffer y_gpu = upload(y), weights_gpu = upload(weights);
      gpu_->scatter_add_rows(kDevice, x_gpu.as<float>(), cols, y_gpu.as<float>(),
                             rows_gpu.as<std::int32_t>(), weights_gpu.as<float>(), count);
      expect_close(x, download(x_gpu, x.size()), 0.0f, 0.0f, "scatter_add_rows");
    }

    DeviceBuffer rows_gpu = upload(std::vector<std::int32_t>{4, -1});
    DeviceBuffer out = poisoned(2 * std::size_t(cols));
    gpu_->gather_rows(kDevice, hidden_gpu.as<float>(), cols, rows_gpu.as<std::int32_t>(), 2,
                      out.as<float>());
    const std::vector<float> gathered = download(out, 2 * std::size_t(cols));
    for (int c = 0; c < cols; ++c) {
      QCOMPARE(gathered[std::size_t(c)], hidden[std::size_t(4 * cols + c)]);
      QCOMPARE(gathered[std::size_t(cols + c)], 0.0f);
    }
    DeviceBuffer weights = upload(std::vector<float>{0.0f, 1.0f});
    gpu_->scatter_add_rows(kDevice, x_gpu.as<float>(), cols, out.as<float>(),
                           rows_gpu.as<std::int32_t>(), weights.as<float>(), 2);
    expect_close(x, download(x_gpu, x.size()), 0.0f, 0.0f, "scatter_add_rows past a negative row");
  }

 private:
  std::unique_ptr<Backend> gpu_;
  std::mt19937 rng_;
};

QUIRE_TEST(CudaOpsTest)
#include "test_cuda_ops.moc"
