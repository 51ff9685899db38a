#include <QTest>
#include <cstring>
#include <memory>
#include <random>

#include "formats_test_support.h"
#include "quire/engine/formats/exl2_layout.h"
#include "quire/engine/formats/exl2_writer.h"
#include "quire/kernels/cpu/half.h"
#include "test_main.h"

using namespace quire::engine::formats;
using quire::kernels::DType;
using quire::kernels::Exl2Group;
using quire::test::kLayerKey;

namespace {

bool operator_equal(const Exl2Group& a, const Exl2Group& b) {
  return a.bits == b.bits && a.rows == b.rows && a.first_row == b.first_row && a.q_row == b.q_row;
}

bool same_groups(const std::vector<Exl2Group>& a, const std::vector<Exl2Group>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), operator_equal);
}

// A consistent layer (64 outputs, 128 inputs in groups of 6, 4 and 3 bits:
// q_groups = (6, 0), (4, 6), (3, 14); 17 q_weight rows), then one change.
struct Broken {
  Exl2Encoding encoding;
  Exl2Tensors tensors;
  LinearShape shape;
  std::vector<std::uint32_t> words;
  std::vector<std::uint16_t> halves;
};

std::unique_ptr<Broken> broken(const QByteArray& change) {
  auto b = std::make_unique<Broken>();
  std::mt19937 rng(1);
  const std::vector<float> w = quire::test::random_matrix(rng, 64, 128);
  b->encoding = quantize_exl2(w, 64, 128, {{{6, 32}, {4, 64}, {3, 32}}, 1});
  Exl2Tensors& t = b->tensors;
  t = b->encoding.views();
  Exl2Encoding& e = b->encoding;
  if (change == "q_weight dtype") t.q_weight.dtype = DType::F16, t.q_weight.shape[1] *= 2;
  if (change == "q_invperm rank") t.q_invperm.shape = {64, 2};
  if (change == "odd q_groups")
    t.q_groups.shape = {5}, t.q_groups.bytes = t.q_groups.bytes.first(10);
  if (change == "q_scale rows")
    t.q_scale.shape = {2, 8}, t.q_scale.bytes = t.q_scale.bytes.first(64);
  if (change == "q_scale_max count") {
    b->halves = e.q_scale_max;
    b->halves.push_back(0x3c00);
    t.q_scale_max = {DType::F16, {4}, std::as_bytes(std::span(b->halves))};
  }
  if (change == "columns") t.q_weight.shape = {17 * 4, 16};
  if (change == "width 7") e.q_groups[2] = 7;
  if (change == "widths increase") e.q_groups[4] = 5;
  if (change == "first row") e.q_groups[1] = 1;
  if (change == "partial words") e.q_groups[3] = 5;
  if (change == "rows go back") e.q_groups[5] = 4;
  if (change == "extra q_weight row") {
    b->words = e.q_weight;
    b->words.resize(b->words.size() + 64, 0u);
    t.q_weight = {DType::I32, {18, 64}, std::as_bytes(std::span(b->words))};
  }
  if (change == "groups exceed inputs") {
    t.q_invperm.shape = {96};
    t.q_invperm.bytes = t.q_invperm.bytes.first(96 * 4);
  }
  if (change == "config inputs") b->shape.in_features = 256;
  if (change == "config outputs") b->shape.out_features = 20;
  if (change == "invperm twice") e.q_invperm[6] = e.q_invperm[5];
  if (change == "invperm range") e.q_invperm[3] = 128;
  if (change == "scale max nan") e.q_scale_max[1] = 0x7e00;
  if (change == "bias length" || change == "bias dtype") {
    b->halves.assign(65, 0x3c00);
    t.bias = TensorView{DType::F16, {65}, std::as_bytes(std::span(b->halves))};
    b->shape.out_features = 64;
    if (change == "bias dtype") t.bias->dtype = DType::I16;
  }
  if (change == "empty") t.q_weight.shape = {0, 64}, t.q_weight.bytes = {};
  return b;
}

}  // namespace

class Exl2LayoutTest : public QObject {
  Q_OBJECT

 private slots:
  // q_groups (8, 0), (4, 8), (2, 16) over 17 q_weight rows and 112 inputs:
  // group rows 8 * 32 / 8 = 32 and 8 * 32 / 4 = 64; the last takes the
  // remaining 16 (one q_weight row at 2 bits). q_invperm in int16.
  void handBuiltGroupTable() {
    std::vector<std::uint32_t> q_weight(17 * 32, 0u);
    std::vector<std::uint16_t> q_groups = {8, 0, 4, 8, 2, 16};
    std::vector<std::uint32_t> q_scale(3 * 4, 0u);
    std::vector<std::uint16_t> q_scale_max(3, 0x3c00);
    std::vector<std::int16_t> q_invperm(112);
    for (int k = 0; k < 112; ++k)
      q_invperm[std::size_t(k)] = std::int16_t((k * 5) % 112);
    Exl2Tensors t;
    t.q_weight = {DType::I32, {17, 32}, std::as_bytes(std::span(q_weight))};
    t.q_groups = {DType::I16, {6}, std::as_bytes(std::span(q_groups))};
    t.q_scale = {DType::I32, {3, 4}, std::as_bytes(std::span(q_scale))};
    t.q_scale_max = {DType::F16, {3}, std::as_bytes(std::span(q_scale_max))};
    t.q_invperm = {DType::I16, {112}, std::as_bytes(std::span(q_invperm))};
    const Exl2Layout layout = describe_exl2(kLayerKey, t);
    QCOMPARE(layout.in_features, std::int64_t(112));
    QCOMPARE(layout.out_features, std::int64_t(32));
    QVERIFY(same_groups(layout.groups, {{8, 32, 0, 0}, {4, 64, 32, 8}, {2, 16, 96, 16}}));
    // perm = argsort(q_invperm): input k sits at quantized row 5k mod 112.
    for (int k = 0; k < 112; ++k)
      QCOMPARE(layout.perm[std::size_t((k * 5) % 112)], k);
    QCOMPARE(layout.bits_per_weight(), (32.0 * 8 + 64.0 * 4 + 16.0 * 2) / 112.0);
  }

  void describesWhatTheWriterWrote_data() {
    QTest::addColumn<int>("outputs");
    QTest::addColumn<int>("inputs");
    QTest::addColumn<double>("bits");
    QTest::addColumn<bool>("shuffle");
    QTest::newRow("4.0 bpw, shuffled") << 96 << 512 << 4.0 << true;
    QTest::newRow("2.5 bpw, identity") << 64 << 256 << 2.5 << false;
    QTest::newRow("6.0 bpw, padded outputs") << 40 << 320 << 6.0 << true;
    QTest::newRow("8.0 bpw") << 32 << 128 << 8.0 << true;
  }

  void describesWhatTheWriterWrote() {
    QFETCH(int, outputs);
    QFETCH(int, inputs);
    QFETCH(double, bits);
    QFETCH(bool, shuffle);
    std::mt19937 rng(42);
    const std::vector<float> w = quire::test::random_matrix(rng, outputs, inputs);
    Exl2QuantizeOptions options;
    options.groups = plan_exl2_groups(inputs, bits);
    if (shuffle) options.permutation_seed = 99;
    const Exl2Encoding encoding = quantize_exl2(w, outputs, inputs, options);
    const Exl2Layout layout = describe_exl2(kLayerKey, encoding.views(), {inputs, outputs});
    QCOMPARE(layout.in_features, std::int64_t(inputs));
    QCOMPARE(layout.out_features, std::int64_t(outputs));
    QCOMPARE(layout.q_columns, std::int64_t((outputs + 31) / 32 * 32));
    QVERIFY(same_groups(layout.groups, encoding.groups));
    QCOMPARE(layout.perm, encoding.perm);
    QCOMPARE(layout.bits_per_weight(), plan_bits_per_weight(options.groups));
  }

  // Without a known output count, the bias tells a padded layer's outputs.
  void biasGivesThePaddedOutputCount() {
    std::mt19937 rng(5);
    const std::vector<float> w = quire::test::random_matrix(rng, 40, 64);
    const Exl2Encoding encoding = quantize_exl2(w, 40, 64, {{{4, 64}}, {}});
    Exl2Tensors tensors = encoding.views();
    QCOMPARE(describe_exl2(kLayerKey, tensors).out_features, std::int64_t(64));
    const std::vector<float> bias(40, 0.5f);
    tensors.bias = TensorView{DType::F32, {40}, std::as_bytes(std::span(bias))};
    QCOMPARE(describe_exl2(kLayerKey, tensors).out_features, std::int64_t(40));
  }

  void errorsNameTheLayerAndTheProblem_data() {
    QTest::addColumn<QByteArray>("change");
    QTest::addColumn<QString>("message");
    const auto row = [](const char* change, const char* message) {
      QTest::newRow(change) << QByteArray(change) << QString(message);
    };
    row("q_weight dtype", "q_weight has dtype F16, expected I32");
    row("q_invperm rank", "q_invperm has shape [64, 2], expected 1 dimension");
    row("odd q_groups", "q_groups has 5 entries; it holds a (bits, first q_weight row) pair");
    row("q_scale rows", "q_scale has shape [2, 8]; 3 groups of 64 columns need [3, 8]");
    row("q_scale_max count", "q_scale_max has 4 entries for 3 groups");
    row("columns", "q_weight has 16 columns; EXL2 converters pad the outputs to a multiple of 32");
    row("width 7", "group 1 has 7 bits; EXL2 uses 2, 3, 4, 5, 6 or 8");
    row("widths increase", "group 2 has 5 bits after a group of 4");
    row("first row", "group 0 starts at q_weight row 1 instead of 0");
    row("partial words",
        "group 0 spans 5 q_weight rows, which do not hold a whole number of 6-bit");
    row("rows go back", "group 2 starts at q_weight row 4, not between group 1's first row 6");
    row("extra q_weight row",
        "the last group's remaining 32 input rows at 3 bits fill 3 q_weight rows, but q_weight "
        "has 4 rows");
    row("groups exceed inputs",
        "the groups before the last cover 96 input rows, but q_invperm has 96");
    row("config inputs", "q_invperm has 128 entries, but the layer has 256 inputs");
    row("config outputs", "q_weight has 64 columns for 20 outputs");
    row("invperm twice", "so it is not a permutation");
    row("invperm range", "q_invperm[3] is 128, outside 0..127");
    row("scale max nan", "q_scale_max[1] is not a finite number");
    row("bias length", "bias has 65 elements for 64 outputs");
    row("bias dtype", "bias has dtype I16, expected F16 or BF16 or F32");
    row("empty", "a layer needs inputs and outputs");
  }

  void errorsNameTheLayerAndTheProblem() {
    QFETCH(QByteArray, change);
    QFETCH(QString, message);
    const std::unique_ptr<Broken> b = broken(change);
    const std::string error =
        quire::test::model_error_message([&] { describe_exl2(kLayerKey, b->tensors, b->shape); });
    QVERIFY2(!error.empty(), "no ModelError");
    QVERIFY2(error.starts_with(std::string(kLayerKey) + " (EXL2): "), error.c_str());
    QVERIFY2(error.find(message.toStdString()) != std::string::npos, error.c_str());
    const bool config = change.startsWith("config");
    QVERIFY2(error.find(config ? "config.json does not describe" : "download or convert") !=
                 std::string::npos,
             error.c_str());
  }

  void theUnchangedLayerIsAccepted() {
    const std::unique_ptr<Broken> b = broken("nothing");
    QCOMPARE(describe_exl2(kLayerKey, b->tensors, b->shape).groups.size(), std::size_t(3));
  }

  void aViewOfTheWrongSizeIsAProgrammingError() {
    const std::unique_ptr<Broken> b = broken("nothing");
    b->tensors.q_scale.shape = {3, 9};
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, describe_exl2(kLayerKey, b->tensors));
  }
};

QUIRE_TEST(Exl2LayoutTest)
#include "test_exl2_layout.moc"
