// Qwen2.5-VL's language model with M-RoPE positions against the reference:
// tests/tools/make_mrope_fixture.py made a random Qwen2 with `quire-cli
// make-model`, rewrote its config.json into Qwen2.5-VL's layout, and had
// reference_forward.py (PyTorch, float64, transformers' M-RoPE) compute the
// logits of a prompt laid out as two images with text between, its
// positions from reference_mrope.py (get_rope_index). The tolerance is the
// other golden cases' (test_golden_logits.cpp): 2e-4 of the largest logit
// of the row, plus 1e-5.
//
// Text alone must not change by a bit: the same model given no positions,
// given t = h = w = the slot, and read as the plain Qwen2 it was made as;
// and the newer tensor layout (model.language_model.*) must give what the
// first one gives.

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "quire/engine/model/mrope_positions.h"
#include "quire/engine/runtime/model_runtime.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "test_main.h"

using namespace quire;
using namespace Qt::StringLiterals;

namespace {

QJsonObject read_json(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return {};
  return QJsonDocument::fromJson(file.readAll()).object();
}

void write_json(const QString& path, const QJsonObject& object) {
  QFile file(path);
  QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
  file.write(QJsonDocument(object).toJson());
}

std::vector<std::int32_t> ints(const QJsonArray& array) {
  std::vector<std::int32_t> out;
  for (const QJsonValue& value : array)
    out.push_back(value.toInt());
  return out;
}

// Every row of logits of `tokens` through a fresh runtime on the CPU, in
// chunks of 8 over pages of 16, so that positions are cut across steps.
std::vector<std::vector<float>> all_logits(const std::filesystem::path& model,
                                           const std::vector<cache::TokenId>& tokens,
                                           std::span<const std::int32_t> rope_positions = {}) {
  kernels::CpuBackend backend;
  engine::RuntimeOptions options;
  options.cache_tokens = 256;
  options.page_size = 16;
  options.max_chunk_tokens = 8;
  engine::ModelRuntime runtime(
      std::make_shared<const engine::ModelDescription>(engine::ModelDescription::open(model)),
      backend, options);
  return runtime.prefill(tokens, true, rope_positions);
}

bool same_bits(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size() ||
        std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(float)) != 0)
      return false;
  }
  return true;
}

// Renames the tensors under "model." to "model.language_model." in a
// safetensors file: the layout newer transformers save Qwen2.5-VL in. Only
// the header changes; it stays padded to 8 bytes.
bool move_under_language_model(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return false;
  const QByteArray bytes = file.readAll();
  file.close();
  quint64 length = 0;
  std::memcpy(&length, bytes.constData(), 8);
  const QJsonObject header =
      QJsonDocument::fromJson(bytes.mid(8, static_cast<qsizetype>(length))).object();
  QJsonObject renamed;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const QString key =
        it.key().startsWith(u"model."_s) ? u"model.language_model."_s + it.key().mid(6) : it.key();
    renamed.insert(key, it.value());
  }
  QByteArray text = QJsonDocument(renamed).toJson(QJsonDocument::Compact);
  while (text.size() % 8 != 0)
    text.append(' ');
  const quint64 new_length = static_cast<quint64>(text.size());
  QByteArray out(8, '\0');
  std::memcpy(out.data(), &new_length, 8);
  out += text;
  out += bytes.mid(8 + static_cast<qsizetype>(length));
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) return false;
  return file.write(out) == out.size();
}

}  // namespace

class MropeGoldenTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;
  QJsonObject fixture_;
  QString made_;  // the model as make-model wrote it (plain Qwen2)
  QString vl_;    // the same files with the fixture's Qwen2.5-VL config.json

 private slots:
  void initTestCase() {
    fixture_ =
        read_json(QStringLiteral(QUIRE_TEST_DATA_DIR "/reference_mrope/qwen25vl-mrope-fp16.json"));
    QVERIFY(!fixture_.isEmpty());
    made_ = root_.filePath(u"made"_s);
    QStringList make{u"make-model"_s, made_};
    for (const QJsonValue& argument : fixture_[u"make_model"].toArray())
      make << argument.toString();
    QProcess process;
    process.start(QStringLiteral(QUIRE_CLI_PATH), make);
    QVERIFY(process.waitForFinished(300000));
    QVERIFY2(process.exitCode() == 0, process.readAllStandardError().constData());

    // The fixture belongs to exactly these weights.
    const QJsonObject digests = fixture_[u"sha256"].toObject();
    for (auto it = digests.begin(); it != digests.end(); ++it) {
      QFile file(made_ + u'/' + it.key());
      QVERIFY(file.open(QIODevice::ReadOnly));
      QVERIFY2(QString::fromLatin1(
                   QCryptographicHash::hash(file.readAll(), QCryptographicHash::Sha256).toHex()) ==
                   it.value().toString(),
               qPrintable("make-model now writes a different " + it.key() +
                          "; regenerate tests/data/reference_mrope with "
                          "tests/tools/make_reference_fixtures.sh"));
    }
    vl_ = root_.filePath(u"vl"_s);
    QVERIFY(QDir().mkpath(vl_));
    for (const QString& name : QDir(made_).entryList(QDir::Files))
      QVERIFY(QFile::copy(made_ + u'/' + name, vl_ + u'/' + name));
    QFile::remove(vl_ + u"/config.json"_s);
    write_json(vl_ + u"/config.json"_s, fixture_[u"config"].toObject());
  }

  void positionsAreGetRopeIndexs() {
    std::vector<engine::MropeImageGrid> grids;
    for (const QJsonValue& grid : fixture_[u"grids"].toArray()) {
      const QJsonArray thw = grid.toArray();
      grids.push_back({thw[0].toInt(), thw[1].toInt(), thw[2].toInt()});
    }
    const engine::MropePositions got = engine::mrope_positions(
        ints(fixture_[u"layout"].toArray()), fixture_[u"image_token_id"].toInt(), grids);
    const QJsonArray rows = fixture_[u"position_ids"].toArray();
    for (int axis = 0; axis < 3; ++axis) {
      const std::vector<std::int32_t> want = ints(rows[axis].toArray());
      QCOMPARE(got.ids.size(), 3 * want.size());
      for (std::size_t i = 0; i < want.size(); ++i)
        QCOMPARE(got.ids[3 * i + std::size_t(axis)], want[i]);
    }
    QCOMPARE(got.delta, fixture_[u"rope_delta"].toInt());
  }

  void logitsMatchTheReference() {
    const std::vector<cache::TokenId> tokens = ints(fixture_[u"tokens"].toArray());
    const QJsonArray rows = fixture_[u"position_ids"].toArray();
    std::vector<std::int32_t> positions;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      for (int axis = 0; axis < 3; ++axis)
        positions.push_back(rows[axis].toArray()[qsizetype(i)].toInt());
    }
    const auto actual = all_logits(vl_.toStdString(), tokens, positions);
    QCOMPARE(actual.size(), tokens.size());
    const QJsonArray at = fixture_[u"positions"].toArray();
    const QJsonArray expected = fixture_[u"logits"].toArray();
    double worst = 0.0;
    for (qsizetype r = 0; r < at.size(); ++r) {
      const QJsonArray want = expected[r].toArray();
      const std::vector<float>& got = actual[std::size_t(at[r].toInt())];
      QCOMPARE(qsizetype(got.size()), want.size());
      double scale = 0.0;
      for (const QJsonValue& value : want)
        scale = std::max(scale, std::fabs(value.toDouble()));
      for (qsizetype v = 0; v < want.size(); ++v) {
        const double difference = std::fabs(double(got[std::size_t(v)]) - want[v].toDouble());
        worst = std::max(worst, difference / scale);
        QVERIFY2(difference <= 2e-4 * scale + 1e-5,
                 qPrintable(QString("position %1, logit %2: %3 vs reference %4")
                                .arg(at[r].toInt())
                                .arg(v)
                                .arg(got[std::size_t(v)])
                                .arg(want[v].toDouble())));
      }
    }
    qInfo("largest difference: %.2e of the largest logit", worst);
    // The positions matter: run as plain text, the image rows differ.
    const auto text = all_logits(vl_.toStdString(), tokens);
    QVERIFY(!same_bits(text, actual));
  }

  void textAloneIsPlainQwen2() {
    const std::vector<cache::TokenId> tokens = ints(fixture_[u"tokens"].toArray());
    std::vector<std::int32_t> slot_ids;
    for (std::size_t i = 0; i < tokens.size(); ++i)
      slot_ids.insert(slot_ids.end(), 3, static_cast<std::int32_t>(i));
    const auto plain = all_logits(made_.toStdString(), tokens);
    QVERIFY(same_bits(all_logits(vl_.toStdString(), tokens), plain));
    QVERIFY(same_bits(all_logits(vl_.toStdString(), tokens, slot_ids), plain));
  }

  void newerLayoutReadsTheSameModel() {
    const QString newer = root_.filePath(u"newer"_s);
    QVERIFY(QDir().mkpath(newer));
    for (const QString& name : QDir(vl_).entryList(QDir::Files)) {
      QVERIFY(QFile::copy(vl_ + u'/' + name, newer + u'/' + name));
      if (name.endsWith(u".safetensors"_s)) QVERIFY(move_under_language_model(newer + u'/' + name));
    }
    // And the text model's keys under text_config.
    QJsonObject config = fixture_[u"config"].toObject();
    QJsonObject text;
    for (const QString& key : {u"hidden_size"_s, u"intermediate_size"_s, u"num_hidden_layers"_s,
                               u"num_attention_heads"_s, u"num_key_value_heads"_s,
                               u"rope_scaling"_s, u"rope_theta"_s, u"rms_norm_eps"_s}) {
      text.insert(key, config.take(key));
    }
    QJsonObject rope = text[u"rope_scaling"_s].toObject();
    rope[u"type"_s] = u"default"_s;
    rope[u"rope_type"_s] = u"default"_s;
    text[u"rope_scaling"_s] = rope;
    config.insert(u"text_config"_s, text);
    QFile::remove(newer + u"/config.json"_s);
    write_json(newer + u"/config.json"_s, config);

    const engine::ModelDescription described = engine::ModelDescription::open(newer.toStdString());
    QCOMPARE(described.text_prefix, std::string("model.language_model."));
    const std::vector<cache::TokenId> tokens = ints(fixture_[u"tokens"].toArray());
    const QJsonArray rows = fixture_[u"position_ids"].toArray();
    std::vector<std::int32_t> positions;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      for (int axis = 0; axis < 3; ++axis)
        positions.push_back(rows[axis].toArray()[qsizetype(i)].toInt());
    }
    QVERIFY(same_bits(all_logits(newer.toStdString(), tokens, positions),
                      all_logits(vl_.toStdString(), tokens, positions)));
  }

  void badPositionsAreRefused() {
    const std::vector<cache::TokenId> tokens{20, 21, 22};
    const std::vector<std::int32_t> two_per_token{0, 0, 1, 1, 2, 2};
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             all_logits(vl_.toStdString(), tokens, two_per_token));
    // A model without M-RoPE takes none.
    const std::vector<std::int32_t> three_per_token{0, 0, 0, 1, 1, 1, 2, 2, 2};
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             all_logits(made_.toStdString(), tokens, three_per_token));
  }
};

QUIRE_TEST(MropeGoldenTest)
#include "test_mrope_golden.moc"
