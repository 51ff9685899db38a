// EXL3 layers as exllamav3 writes them: the packing of a tile's symbols, the
// checks that name what a broken layer gets wrong, and the descriptor the
// products read.

#include <QTest>
#include <cstring>
#include <memory>
#include <random>

#include "quire/engine/formats/exl3_layout.h"
#include "quire/engine/formats/exl3_writer.h"
#include "quire/engine/model_error.h"
#include "quire/kernels/cpu/exl3_trellis.h"
#include "quire/kernels/cpu/half.h"
#include "quire/kernels/cpu/linear.h"
#include "test_main.h"

using namespace quire::engine::formats;
using quire::engine::ModelError;
using quire::kernels::DType;
using quire::kernels::Exl3Codebook;

namespace {

constexpr const char* kKey = "model.layers.0.mlp.up_proj";

// A consistent layer (72 outputs padded to 128, 200 inputs padded to 256,
// 3 bits, MCG), then one change.
struct Broken {
  Exl3Encoding encoding;
  Exl3Tensors tensors;
  LinearShape shape{200, 72};
  std::vector<std::byte> marker;
  std::vector<std::uint16_t> halves;
  std::vector<std::int32_t> words;
};

std::unique_ptr<Broken> broken(const QByteArray& change) {
  auto b = std::make_unique<Broken>();
  b->encoding = random_exl3(72, 200, {3, Exl3Codebook::mcg, 0.1, 7});
  b->tensors = b->encoding.views(b->marker);
  Exl3Tensors& t = b->tensors;
  if (change == "trellis dtype") t.trellis.dtype = DType::F16;
  if (change == "trellis rank") {
    t.trellis.shape = {16, 8 * 48};
  }
  if (change == "nine bits") {
    t.trellis.shape = {8, 4, 144};
    t.trellis.bytes = t.trellis.bytes.first(std::size_t(8 * 4 * 144 * 2));
  }
  if (change == "width not 16 x bits") {
    t.trellis.shape = {32, 8, 24};
  }
  if (change == "config inputs") b->shape.in_features = 300;
  if (change == "config outputs") b->shape.out_features = 130;
  if (change == "unpadded tiles") {
    t.trellis.shape = {12, 8, 48};
    t.trellis.bytes = t.trellis.bytes.first(std::size_t(12 * 8 * 48 * 2));
    b->shape = {};
  }
  if (change == "suh length") t.suh->shape = {128}, t.suh->bytes = t.suh->bytes.first(256);
  if (change == "svh dtype") t.svh->dtype = DType::BF16;
  if (change == "no suh") t.suh.reset();
  if (change == "suh not finite") {
    b->halves.assign(256, 0x3c00);
    b->halves[17] = 0x7c00;
    t.suh = TensorView{DType::F16, {256}, std::as_bytes(std::span(b->halves))};
  }
  if (change == "both codebooks") t.mul1 = t.mcg;
  if (change == "unknown multiplier") {
    b->words = {12345};
    t.mcg = TensorView{DType::I32, {}, std::as_bytes(std::span(b->words))};
  }
  if (change == "marker shape") {
    b->words = {0, 0};
    t.mcg = TensorView{DType::I32, {2}, std::as_bytes(std::span(b->words))};
  }
  if (change == "bias length") {
    b->halves.assign(100, 0);
    t.bias = TensorView{DType::F16, {100}, std::as_bytes(std::span(b->halves))};
  }
  return b;
}

}  // namespace

class Exl3LayoutTest : public QObject {
  Q_OBJECT

 private slots:
  // Packing puts symbol t at stream bits [t bits, (t + 1) bits), so that the
  // state the decoder reads at position t is the last 16 bits of symbols up
  // to t: packing and reading agree with the shift register of the trellis.
  void packedSymbolsReadBackAsTheirStates() {
    std::mt19937 rng(2);
    for (int bits = 1; bits <= 8; ++bits) {
      std::uniform_int_distribution<int> symbol(0, (1 << bits) - 1);
      std::vector<std::uint16_t> symbols(256);
      for (std::uint16_t& s : symbols)
        s = static_cast<std::uint16_t>(symbol(rng));
      std::vector<std::uint16_t> tile(std::size_t(16 * bits));
      pack_exl3_tile(symbols, bits, tile.data());
      const std::vector<std::uint16_t> states = exl3_states_of_symbols(symbols, bits);
      for (int t = 0; t < 256; ++t) {
        QCOMPARE(quire::kernels::exl3_state(tile.data(), bits, t), std::uint32_t(states[t]));
        QCOMPARE(states[t] & ((1 << bits) - 1), int(symbols[t]));
      }
    }
  }

  // The first 32 stream bits of four 4-bit symbols 1, 2, 3, 4 ... are
  // 0x1234 5678 as one word, stored low half first.
  void packingIsMostSignificantFirstLowHalfFirst() {
    std::vector<std::uint16_t> symbols(256, 0);
    for (int t = 0; t < 8; ++t)
      symbols[std::size_t(t)] = static_cast<std::uint16_t>(t + 1);
    std::vector<std::uint16_t> tile(64);
    pack_exl3_tile(symbols, 4, tile.data());
    QCOMPARE(tile[0], std::uint16_t(0x5678));
    QCOMPARE(tile[1], std::uint16_t(0x1234));
  }

  void randomLayersDescribeThemselves() {
    const Exl3Encoding encoding = random_exl3(72, 200, {3, Exl3Codebook::mcg, 0.1, 7});
    std::vector<std::byte> marker;
    const Exl3Layout layout = describe_exl3(kKey, encoding.views(marker), {200, 72});
    QCOMPARE(layout.in_features, std::int64_t(200));
    QCOMPARE(layout.out_features, std::int64_t(72));
    QCOMPARE(layout.padded_in, std::int64_t(256));
    QCOMPARE(layout.padded_out, std::int64_t(128));
    QCOMPARE(layout.bits, 3);
    QCOMPARE(layout.codebook, Exl3Codebook::mcg);
    QVERIFY(layout.suh.empty() && layout.svh.empty());
    // The tensors the writer names, as exllamav3 names and shapes them.
    const std::vector<NamedTensor> tensors = encoding.tensors();
    QCOMPARE(tensors.size(), std::size_t(4));
    QCOMPARE(QString::fromStdString(tensors[0].suffix), QStringLiteral("trellis"));
    QCOMPARE(tensors[0].shape, (std::vector<std::int64_t>{16, 8, 48}));
    QCOMPARE(QString::fromStdString(tensors[3].suffix), QStringLiteral("mcg"));
    QVERIFY(tensors[3].shape.empty());
    std::uint32_t multiplier = 0;
    std::memcpy(&multiplier, tensors[3].bytes.data(), 4);
    QCOMPARE(multiplier, 0xCBAC1FEDu);
    // About the asked deviation: W is a rotation of the codebook's values.
    const std::vector<float> dense =
        quire::kernels::dequantize(host_linear_weight(layout, encoding.views(marker)));
    double sum = 0.0;
    for (const float w : dense)
      sum += double(w) * w;
    const double rms = std::sqrt(sum / double(dense.size()));
    QVERIFY2(rms > 0.08 && rms < 0.12, qPrintable(QString::number(rms)));
  }

  // Older converters stored the signs packed 16 to an I16 word (su, sv),
  // bit set for -1, as exllamav3's pack_signs does.
  void packedSignsAreUnpacked() {
    const Exl3Encoding encoding = random_exl3(128, 128, {4, Exl3Codebook::three_inst, 1.0, 3});
    std::vector<std::byte> marker;
    Exl3Tensors tensors = encoding.views(marker);
    std::vector<std::uint16_t> packed(8, 0);
    packed[0] = 0x0005;  // elements 0 and 2 negative
    packed[7] = 0x8000;  // element 127 negative
    const TensorView su{DType::I16, {8}, std::as_bytes(std::span(packed))};
    tensors.suh.reset();
    tensors.su = su;
    tensors.svh.reset();
    tensors.sv = su;
    const Exl3Layout layout = describe_exl3(kKey, tensors, {128, 128});
    QCOMPARE(layout.suh.size(), std::size_t(128));
    QCOMPARE(layout.suh[0], std::uint16_t(0xbc00));
    QCOMPARE(layout.suh[1], std::uint16_t(0x3c00));
    QCOMPARE(layout.suh[2], std::uint16_t(0xbc00));
    QCOMPARE(layout.suh[127], std::uint16_t(0xbc00));
    QCOMPARE(layout.svh, layout.suh);
  }

  void errorsNameTheLayerAndTheProblem_data() {
    QTest::addColumn<QByteArray>("change");
    QTest::addColumn<QString>("message");
    const auto row = [](const char* change, const char* message) {
      QTest::newRow(change) << QByteArray(change) << QString(message);
    };
    row("trellis dtype", "trellis has dtype F16, expected I16");
    row("trellis rank", "trellis has shape [16, 384], expected 3 dimensions");
    row("nine bits", "its last dimension must be 16 x the bits per weight, 1 to 8");
    row("width not 16 x bits", "trellis has shape [32, 8, 24]");
    row("config inputs",
        "trellis holds 256 inputs (its first dimension times 16), but the "
        "layer has 300, which pads to 384");
    row("config outputs",
        "trellis holds 128 outputs (its second dimension times 16), but the "
        "layer has 130, which pads to 256");
    row("unpadded tiles", "trellis has 12 tiles of 16 inputs (192), not a multiple of 128");
    row("suh length", "suh has 128 values; the trellis has 256 (padded) inputs");
    row("svh dtype", "svh has dtype BF16, expected F16");
    row("no suh", "there is no suh (nor the packed su) beside the trellis");
    row("suh not finite", "suh[17] is not a finite number");
    row("both codebooks", "both mcg and mul1 are present");
    row("unknown multiplier",
        "mcg holds the multiplier 0x3039, but the MCG codebook multiplies "
        "by 0xCBAC1FED; Quire knows no other codebook");
    row("marker shape",
        "mcg has dtype I32 and shape [2]; it should hold the codebook's "
        "multiplier as one I32");
    row("bias length", "bias has 100 elements for 72 outputs (128 padded)");
  }

  void errorsNameTheLayerAndTheProblem() {
    QFETCH(QByteArray, change);
    QFETCH(QString, message);
    const std::unique_ptr<Broken> b = broken(change);
    try {
      describe_exl3(kKey, b->tensors, b->shape);
      QFAIL("accepted");
    } catch (const ModelError& error) {
      const QString text = QString::fromUtf8(error.what());
      QVERIFY2(text.startsWith(QString(kKey) + " (EXL3): "), qPrintable(text));
      QVERIFY2(text.contains(message), qPrintable(text));
    }
  }
};

QUIRE_TEST(Exl3LayoutTest)
#include "test_exl3_layout.moc"
