#include "tokenizer_test_support.h"

#include <QFile>
#include <QTemporaryDir>
#include <stdexcept>
#include <string>

#include "quire/engine/tokenizer/training.h"

namespace quire::test {

const QByteArray& trained_tokenizer_model() {
  static const QByteArray model = [] {
    QTemporaryDir dir;
    if (!dir.isValid()) throw std::runtime_error("no temporary directory");
    const QString path = dir.filePath(QStringLiteral("tokenizer.model"));
    quire::engine::train_tokenizer(std::string(quire::engine::default_training_corpus()),
                                   kTestVocabSize, path.toStdString(), kTestSeed);
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) throw std::runtime_error("cannot read the trained model");
    return file.readAll();
  }();
  return model;
}

void write_file(const QString& path, const QByteArray& bytes) {
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) || file.write(bytes) != bytes.size()) {
    throw std::runtime_error("cannot write " + path.toStdString());
  }
}

std::filesystem::path write_model_dir(const QString& dir, const QMap<QString, QByteArray>& files) {
  write_file(dir + QStringLiteral("/tokenizer.model"), trained_tokenizer_model());
  for (auto it = files.begin(); it != files.end(); ++it)
    write_file(dir + u'/' + it.key(), it.value());
  return dir.toStdString();
}

}  // namespace quire::test
