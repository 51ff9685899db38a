#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <stdexcept>
#include <string>

#include "quire/engine/tokenizer/tokenizer.h"
#include "quire/engine/tokenizer/training.h"
#include "test_main.h"
#include "tokenizer_test_support.h"

using quire::engine::default_training_corpus;
using quire::engine::PieceKind;
using quire::engine::Tokenizer;
using quire::engine::train_tokenizer;

namespace {

QByteArray read(const QString& path) {
  QFile file(path);
  return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

}  // namespace

class TrainingTest : public QObject {
  Q_OBJECT

 private slots:
  void corpusIsVariedEnglish() {
    const std::string_view corpus = default_training_corpus();
    QVERIFY(corpus.size() > 20'000 && corpus.size() < 40'000);
    QVERIFY(QString::fromUtf8(corpus.data(), qsizetype(corpus.size())).toUtf8().size() ==
            qsizetype(corpus.size()));  // valid UTF-8
    for (const char* word : {"café", "naïve", "€", "?", "!", "\"", "2024", "\n"}) {
      QVERIFY2(corpus.find(word) != std::string_view::npos, word);
    }
  }

  void sameSeedGivesTheSameFile() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string corpus(default_training_corpus());
    const QString first = dir.filePath(QStringLiteral("first.model"));
    const QString second = dir.filePath(QStringLiteral("second.model"));
    train_tokenizer(corpus, 600, first.toStdString(), 11);
    train_tokenizer(corpus, 600, second.toStdString(), 11);
    QVERIFY(!read(first).isEmpty());
    QCOMPARE(read(first), read(second));
  }

  void trainsTheRequestedVocabularyQuickly_data() {
    QTest::addColumn<int>("vocabSize");
    QTest::newRow("320") << 320;
    QTest::newRow("1000") << 1000;
  }

  void trainsTheRequestedVocabularyQuickly() {
    QFETCH(int, vocabSize);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QElapsedTimer timer;
    timer.start();
    train_tokenizer(std::string(default_training_corpus()), vocabSize,
                    dir.filePath(QStringLiteral("tokenizer.model")).toStdString(), 3);
    // Well under a second in an optimized build; the bound leaves room for sanitizers.
    QVERIFY2(timer.elapsed() < 10'000, qPrintable(QString::number(timer.elapsed())));

    const Tokenizer tokenizer = Tokenizer::load(dir.path().toStdString());
    QCOMPARE(tokenizer.vocab_size(), vocabSize);
    QCOMPARE(tokenizer.kind(0), PieceKind::Unknown);
    QCOMPARE(tokenizer.piece(1), std::string("<s>"));
    QCOMPARE(tokenizer.piece(2), std::string("</s>"));
    int bytes = 0;
    for (std::int32_t id = 0; id < vocabSize; ++id)
      bytes += tokenizer.byte_value(id) ? 1 : 0;
    QCOMPARE(bytes, 256);
    const std::string text = "Zoë paid €12.50 for 2 crème brûlées 🍰 at 9:30.";
    QCOMPARE(tokenizer.decode(tokenizer.encode(text, true)), text);
    // Digits are split one by one, as in Llama's tokenizer.
    for (const std::int32_t id : tokenizer.encode("2024", false)) {
      QVERIFY(tokenizer.decode(std::vector{id}).size() <= 1);
    }
  }

  void rejectsWhatCannotBeTrained() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath(QStringLiteral("tokenizer.model")).toStdString();
    const std::string corpus(default_training_corpus());
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, train_tokenizer(corpus, 100, path, 1));
    // Room for too few characters to cover 98% of the text.
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, train_tokenizer(corpus, 300, path, 1));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, train_tokenizer("\n\n", 400, path, 1));
    // Far more pieces than a short text can produce.
    QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                             train_tokenizer("just a few words\n", 5000, path, 1));
    QVERIFY_THROWS_EXCEPTION(
        std::runtime_error,
        train_tokenizer(corpus, 400, dir.filePath("missing/x.model").toStdString(), 1));
  }
};

QUIRE_TEST(TrainingTest)
#include "test_training.moc"
