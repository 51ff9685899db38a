// compressed-tensors' pack-quantized weights: values and zero points packed
// low bits first with their 2^(b-1) offset, the repacking into GPTQ's
// layout, group actorder, the writer, and describe_pack_quantized's errors.

#include <QTest>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>

#include "formats_test_support.h"
#include "quire/engine/formats/compressed_tensors_writer.h"
#include "quire/engine/formats/pack_quantized_layout.h"
#include "quire/kernels/cpu/half.h"
#include "quire/kernels/cpu/linear.h"
#include "test_main.h"

using namespace quire::engine::formats;
using quire::kernels::DType;
using quire::test::kLayerKey;

using quire::test::bytes_of;
using quire::test::find_tensor;
using quire::test::view_of;

namespace {

PackQuantizedTensors views_of(const std::vector<NamedTensor>& tensors) {
  PackQuantizedTensors t;
  t.weight_packed = view_of(*find_tensor(tensors, "weight_packed"));
  t.weight_scale = view_of(*find_tensor(tensors, "weight_scale"));
  t.weight_shape = view_of(*find_tensor(tensors, "weight_shape"));
  if (const NamedTensor* zero = find_tensor(tensors, "weight_zero_point"))
    t.weight_zero_point = view_of(*zero);
  if (const NamedTensor* g_idx = find_tensor(tensors, "weight_g_idx"))
    t.weight_g_idx = view_of(*g_idx);
  return t;
}

std::vector<float> dequantized(const GptqLayout& layout, const PackQuantizedTensors& tensors) {
  return quire::kernels::dequantize(
      host_linear_weight(layout, repack_pack_quantized(layout, tensors), std::nullopt));
}

float scale_value(const NamedTensor& scales, std::size_t i) {
  std::uint16_t bits = 0;
  std::memcpy(&bits, scales.bytes.data() + 2 * i, 2);
  return quire::kernels::bf16_to_float(bits);
}

// Tensors of a hand-built layer, owned.
struct Owned {
  std::vector<std::uint32_t> packed, zeros;
  std::vector<std::uint16_t> scales;
  std::vector<std::int64_t> shape;
  std::vector<std::int32_t> g_idx;
  PackQuantizedTensors tensors;
};

PackQuantizedScheme scheme_of(int bits, bool symmetric, int group_size) {
  PackQuantizedScheme scheme;
  scheme.bits = bits;
  scheme.symmetric = symmetric;
  scheme.per_channel = group_size == 0;
  scheme.group_size = group_size;
  return scheme;
}

struct Broken {
  std::vector<NamedTensor> encoded;
  PackQuantizedTensors tensors;
  PackQuantizedScheme scheme;
  LinearShape shape;
  std::vector<std::int64_t> dimensions;
  std::vector<std::int32_t> indices;
  std::vector<std::uint32_t> words;
};

// A consistent layer (64 outputs, 128 inputs, 4 bits with zero points in
// groups of 32, group actorder), then one change.
std::unique_ptr<Broken> broken(const QByteArray& change) {
  auto b = std::make_unique<Broken>();
  std::mt19937 rng(7);
  IntQuantizeOptions options;
  options.symmetric = false;
  options.group_size = 32;
  options.actorder_seed = 9;
  b->encoded = quantize_pack_quantized(quire::test::random_matrix(rng, 64, 128), 64, 128, options);
  b->scheme = scheme_of(4, false, 32);
  b->scheme.group_actorder = true;
  PackQuantizedTensors& t = b->tensors;
  t = views_of(b->encoded);
  const NamedTensor& g_idx = *find_tensor(b->encoded, "weight_g_idx");
  b->indices.resize(128);
  std::memcpy(b->indices.data(), g_idx.bytes.data(), 128 * 4);
  if (change == "3 bits") b->scheme.bits = 3;
  if (change == "packed dtype") t.weight_packed.dtype = DType::F32;
  if (change == "scale dtype") t.weight_scale.dtype = DType::I16;
  if (change == "shape elements") {
    b->dimensions = {64, 128, 1};
    t.weight_shape = {DType::I64, {3}, bytes_of(b->dimensions)};
  }
  if (change == "outputs not multiple of 8") {
    b->dimensions = {60, 128};
    t.weight_shape = {DType::I64, {2}, bytes_of(b->dimensions)};
  }
  if (change == "config shape") b->shape = {256, 64};
  if (change == "8 bits in the config") b->scheme.bits = 8;
  if (change == "group size not dividing") b->scheme.group_size = 48;
  if (change == "scales of other groups") b->scheme.group_size = 64;
  if (change == "zero points where symmetric") b->scheme.symmetric = true;
  if (change == "missing zero points") t.weight_zero_point.reset();
  if (change == "zero point shape") {
    b->words.assign(4 * 8, 0u);
    t.weight_zero_point = TensorView{DType::I32, {4, 8}, bytes_of(b->words)};
  }
  if (change == "g_idx range") b->indices[5] = 9;
  if (change == "g_idx uneven") {
    for (std::int32_t& group : b->indices) {
      if (group == 1) {
        group = 0;
        break;
      }
    }
  }
  if (change == "g_idx length") b->indices.resize(127);
  t.weight_g_idx = TensorView{DType::I32, {std::int64_t(b->indices.size())}, bytes_of(b->indices)};
  if (change == "g_idx missing") t.weight_g_idx.reset();
  return b;
}

}  // namespace

class PackQuantizedLayoutTest : public QObject {
  Q_OBJECT

 private slots:
  // 4 bits, symmetric, one scale per row: q[n, k] = k - n stored as
  // q + 8 at bits 4k of row n's word; scale (n + 1) / 4 in BF16.
  void symmetricValuesCarryTheirOffset() {
    Owned o;
    for (std::uint32_t n = 0; n < 8; ++n) {
      std::uint32_t word = 0;
      for (std::uint32_t k = 0; k < 8; ++k)
        word |= (k - n + 8) << (4 * k);
      o.packed.push_back(word);
      o.scales.push_back(quire::kernels::float_to_bf16(float(n + 1) / 4.0f));
    }
    o.shape = {8, 8};
    o.tensors.weight_packed = {DType::I32, {8, 1}, bytes_of(o.packed)};
    o.tensors.weight_scale = {DType::BF16, {8, 1}, bytes_of(o.scales)};
    o.tensors.weight_shape = {DType::I64, {2}, bytes_of(o.shape)};
    const GptqLayout layout =
        describe_pack_quantized(kLayerKey, o.tensors, scheme_of(4, true, 0), {8, 8});
    QVERIFY(layout.symmetric);
    QCOMPARE(layout.scale_dtype, DType::BF16);
    QCOMPARE(layout.groups, 1);
    QCOMPARE(layout.group_size, 8);
    // GPTQ's qweight [K / 8, N] is weight_packed [N, K / 8] transposed.
    QCOMPARE(repack_pack_quantized(layout, o.tensors).qweight, o.packed);
    const std::vector<float> dense = dequantized(layout, o.tensors);
    for (int n = 0; n < 8; ++n) {
      for (int k = 0; k < 8; ++k)
        QCOMPARE(dense[std::size_t(n * 8 + k)], float(k - n) * float(n + 1) / 4.0f);
    }
    // The bytes a device holds: the words, BF16 scales and no zero points.
    QCOMPARE(layout.device_bytes(), std::int64_t(8 * 4 + 8 * 2));
  }

  // 4 bits with zero points, two groups of 8 of 16 inputs. Zero points are
  // packed along the outputs: word [n / 8, g] holds z[n, g] + 8 at bits
  // 4 (n % 8). Here q[n, k] = (3k + n) % 16 - 8, z[n, g] = n - 4 + g and the
  // scales 1 and 0.5.
  void asymmetricZeroPointsArePackedAlongTheOutputs() {
    Owned o;
    for (std::uint32_t n = 0; n < 8; ++n) {
      for (std::uint32_t word_index = 0; word_index < 2; ++word_index) {
        std::uint32_t word = 0;
        for (std::uint32_t j = 0; j < 8; ++j)
          word |= ((3 * (8 * word_index + j) + n) % 16) << (4 * j);  // q + 8
        o.packed.push_back(word);
      }
      o.scales.push_back(quire::kernels::float_to_bf16(1.0f));
      o.scales.push_back(quire::kernels::float_to_bf16(0.5f));
    }
    for (std::uint32_t g = 0; g < 2; ++g) {
      std::uint32_t word = 0;
      for (std::uint32_t n = 0; n < 8; ++n)
        word |= (n - 4 + g + 8) << (4 * n);
      o.zeros.push_back(word);  // [1, 2]: one word per group
    }
    o.shape = {8, 16};
    o.tensors.weight_packed = {DType::I32, {8, 2}, bytes_of(o.packed)};
    o.tensors.weight_scale = {DType::BF16, {8, 2}, bytes_of(o.scales)};
    o.tensors.weight_shape = {DType::I64, {2}, bytes_of(o.shape)};
    o.tensors.weight_zero_point = TensorView{DType::I32, {1, 2}, bytes_of(o.zeros)};
    const GptqLayout layout =
        describe_pack_quantized(kLayerKey, o.tensors, scheme_of(4, false, 8), {16, 8});
    QVERIFY(!layout.symmetric);
    QVERIFY(layout.exact_zeros);
    QCOMPARE(repack_pack_quantized(layout, o.tensors).qzeros, o.zeros);
    const std::vector<float> dense = dequantized(layout, o.tensors);
    for (int n = 0; n < 8; ++n) {
      for (int k = 0; k < 16; ++k) {
        const int g = k / 8;
        const int q = (3 * k + n) % 16 - 8;
        const float expected = float(q - (n - 4 + g)) * (g == 0 ? 1.0f : 0.5f);
        QCOMPARE(dense[std::size_t(n * 16 + k)], expected);
      }
    }
    // The same zero points unpacked (int8 [N, G]), as compressed-tensors
    // wrote them before it packed them, give the same weights.
    std::vector<std::int8_t> unpacked;
    for (int n = 0; n < 8; ++n) {
      for (int g = 0; g < 2; ++g)
        unpacked.push_back(std::int8_t(n - 4 + g));
    }
    PackQuantizedTensors older = o.tensors;
    older.weight_zero_point = TensorView{DType::I8, {8, 2}, bytes_of(unpacked)};
    QCOMPARE(dequantized(describe_pack_quantized(kLayerKey, older, scheme_of(4, false, 8)), older),
             dense);
  }

  // 8 bits: four values to a word, q + 128 from the low byte up.
  void eightBitValuesFillFourToAWord() {
    Owned o;
    for (std::uint32_t n = 0; n < 8; ++n) {
      for (std::uint32_t w = 0; w < 2; ++w) {
        std::uint32_t word = 0;
        for (std::uint32_t j = 0; j < 4; ++j)
          word |= (10 * (4 * w + j) + n + 88) << (8 * j);  // q = 10k - 40 + n
        o.packed.push_back(word);
      }
      o.scales.push_back(quire::kernels::float_to_half(0.25f));
    }
    o.shape = {8, 8};
    o.tensors.weight_packed = {DType::I32, {8, 2}, bytes_of(o.packed)};
    o.tensors.weight_scale = {DType::F16, {8, 1}, bytes_of(o.scales)};
    o.tensors.weight_shape = {DType::I64, {2}, bytes_of(o.shape)};
    const GptqLayout layout = describe_pack_quantized(kLayerKey, o.tensors, scheme_of(8, true, 0));
    QCOMPARE(layout.bits, 8);
    const std::vector<float> dense = dequantized(layout, o.tensors);
    for (int n = 0; n < 8; ++n) {
      for (int k = 0; k < 8; ++k)
        QCOMPARE(dense[std::size_t(n * 8 + k)], float(10 * k - 40 + n) * 0.25f);
    }
  }

  // Group actorder: input k takes the scale of group g_idx[k]; an index of
  // -1 anywhere means none was set (compressed-tensors' column order).
  void actorderTakesEachInputsGroup() {
    Owned o;
    for (int n = 0; n < 8; ++n) {
      o.packed.insert(o.packed.end(), {0x99999999u, 0x99999999u});  // every q = 1
      o.scales.push_back(quire::kernels::float_to_bf16(1.0f));
      o.scales.push_back(quire::kernels::float_to_bf16(2.0f));
    }
    for (int k = 0; k < 16; ++k)
      o.g_idx.push_back(k % 2);
    o.shape = {8, 16};
    o.tensors.weight_packed = {DType::I32, {8, 2}, bytes_of(o.packed)};
    o.tensors.weight_scale = {DType::BF16, {8, 2}, bytes_of(o.scales)};
    o.tensors.weight_shape = {DType::I64, {2}, bytes_of(o.shape)};
    o.tensors.weight_g_idx = TensorView{DType::I32, {16}, bytes_of(o.g_idx)};
    PackQuantizedScheme scheme = scheme_of(4, true, 8);
    scheme.group_actorder = true;
    const GptqLayout layout = describe_pack_quantized(kLayerKey, o.tensors, scheme);
    QCOMPARE(layout.g_idx, o.g_idx);
    QCOMPARE(layout.g_idx_bytes(), std::int64_t(16 * 4));
    const std::vector<float> dense = dequantized(layout, o.tensors);
    for (int k = 0; k < 16; ++k)
      QCOMPARE(dense[std::size_t(k)], k % 2 == 0 ? 1.0f : 2.0f);
    o.g_idx[3] = -1;
    QVERIFY(describe_pack_quantized(kLayerKey, o.tensors, scheme).g_idx.empty());
  }

  // quantize -> describe -> repack -> dequantize: every weight within half
  // a step of its group's scale, plus what rounding the scale to BF16 (8
  // significant bits: at most 2^-8 of it) stretches the 2^b - 1 steps of the
  // range by, which clamping at the range's end takes off.
  void roundTripErrorIsBoundedByTheScales_data() {
    QTest::addColumn<int>("bits");
    QTest::addColumn<bool>("symmetric");
    QTest::addColumn<int>("groupSize");
    QTest::addColumn<bool>("actorder");
    QTest::newRow("W4A16, groups of 32") << 4 << true << 32 << false;
    QTest::newRow("W4A16, groups of 64, actorder") << 4 << true << 64 << true;
    QTest::newRow("W4A16 asymmetric, groups of 128") << 4 << false << 128 << false;
    QTest::newRow("W4A16 asymmetric, actorder") << 4 << false << 32 << true;
    QTest::newRow("W4A16, per channel") << 4 << true << 0 << false;
    QTest::newRow("W8A16, per channel") << 8 << true << 0 << false;
    QTest::newRow("W8A16 asymmetric, groups of 64") << 8 << false << 64 << false;
  }

  void roundTripErrorIsBoundedByTheScales() {
    QFETCH(int, bits);
    QFETCH(bool, symmetric);
    QFETCH(int, groupSize);
    QFETCH(bool, actorder);
    const std::int64_t outputs = 40;
    const std::int64_t inputs = 256;
    std::mt19937 rng(31);
    const std::vector<float> w = quire::test::random_matrix(rng, outputs, inputs);
    IntQuantizeOptions options;
    options.bits = bits;
    options.symmetric = symmetric;
    options.group_size = groupSize;
    if (actorder) options.actorder_seed = 4;
    const std::vector<NamedTensor> encoded = quantize_pack_quantized(w, outputs, inputs, options);
    QCOMPARE(find_tensor(encoded, "weight_zero_point") == nullptr, symmetric);
    QCOMPARE(find_tensor(encoded, "weight_g_idx") != nullptr, actorder);
    QCOMPARE(find_tensor(encoded, "weight_shape")->dtype, DType::I64);
    const PackQuantizedTensors tensors = views_of(encoded);
    PackQuantizedScheme scheme = scheme_of(bits, symmetric, groupSize);
    scheme.group_actorder = actorder;
    const GptqLayout layout =
        describe_pack_quantized(kLayerKey, tensors, scheme, {inputs, outputs});
    QCOMPARE(layout.g_idx.empty(), !actorder);
    const std::vector<float> dense = dequantized(layout, tensors);
    const std::int64_t groups = groupSize == 0 ? 1 : inputs / groupSize;
    for (std::int64_t n = 0; n < outputs; ++n) {
      for (std::int64_t k = 0; k < inputs; ++k) {
        const std::int64_t g = actorder ? layout.g_idx[std::size_t(k)] : k * groups / inputs;
        const double scale =
            scale_value(*find_tensor(encoded, "weight_scale"), std::size_t(n * groups + g));
        const std::size_t at = std::size_t(n * inputs + k);
        const double bound = scale * (0.5 + double((1 << bits) - 1) / 256.0);
        QVERIFY2(std::fabs(double(w[at]) - double(dense[at])) <= bound,
                 qPrintable(QString("input %1, output %2").arg(k).arg(n)));
      }
    }
  }

  void errorsNameTheTensorAndTheProblem_data() {
    QTest::addColumn<QByteArray>("change");
    QTest::addColumn<QString>("message");
    const auto row = [](const char* change, const char* message) {
      QTest::newRow(change) << QByteArray(change) << QString(message);
    };
    row("3 bits", "pack-quantized weights of 3 bits are not supported");
    row("packed dtype", "weight_packed has dtype F32, expected I32");
    row("scale dtype", "weight_scale has dtype I16, expected F16 or BF16 or F32");
    row("shape elements", "weight_shape has 3 elements");
    row("outputs not multiple of 8", "whose inputs and outputs are multiples of 8");
    row("config shape", "weight_shape is [64, 128] (outputs, inputs), but the layer is [64, 256]");
    row("8 bits in the config",
        "weight_packed has shape [64, 16]; [64, 128] in 8-bit values needs [64, 32] (it holds "
        "4-bit values: the config's num_bits disagrees)");
    row("group size not dividing", "the scheme's group_size 48 does not divide the layer's 128");
    row("scales of other groups",
        "weight_scale has shape [64, 4]; groups of 64 inputs need [64, 2]");
    row("zero points where symmetric", "but the scheme is symmetric (every zero point is 0)");
    row("missing zero points", "weight_zero_point is missing, but the scheme is asymmetric");
    row("zero point shape",
        "weight_zero_point has shape [4, 8]; packed zero points of 64 "
        "outputs in 4 groups need [8, 4]");
    row("g_idx range", "weight_g_idx[5] is 9, but there are 4 groups");
    row("g_idx uneven", "weight_g_idx puts 33 inputs in group 0; each of the 4 groups holds 32");
    row("g_idx length", "weight_g_idx has 127 entries for 128 inputs");
    row("g_idx missing", "weight_g_idx is missing, but the scheme's actorder is \"group\"");
  }

  void errorsNameTheTensorAndTheProblem() {
    QFETCH(QByteArray, change);
    QFETCH(QString, message);
    const std::unique_ptr<Broken> b = broken(change);
    const std::string error = quire::test::model_error_message(
        [&] { describe_pack_quantized(kLayerKey, b->tensors, b->scheme, b->shape); });
    QVERIFY2(!error.empty(), "no ModelError");
    QVERIFY2(error.starts_with(kLayerKey), error.c_str());
    QVERIFY2(error.find(message.toStdString()) != std::string::npos, error.c_str());
  }

  void theUnchangedLayerIsAccepted() {
    const std::unique_ptr<Broken> b = broken("nothing");
    const GptqLayout layout = describe_pack_quantized(kLayerKey, b->tensors, b->scheme, b->shape);
    QCOMPARE(layout.groups, 4);
    QCOMPARE(layout.g_idx.size(), std::size_t(128));
  }
};

QUIRE_TEST(PackQuantizedLayoutTest)
#include "test_pack_quantized_layout.moc"
