#include "mistral_small_tokenizer.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <stdexcept>

namespace quire::test {
namespace {

// Mistral Small 3.1's names for the control tokens NeMo's file names
// otherwise ("<pad>" at 10, "[PREFIX]" at 11, "<SPECIAL_17>" ...).
struct Renamed {
  int id;
  const char* content;
};
constexpr Renamed kMistralSmallControls[] = {
    {10, "[IMG]"},         {11, "<pad>"},           {12, "[IMG_BREAK]"},
    {13, "[IMG_END]"},     {14, "[PREFIX]"},        {15, "[MIDDLE]"},
    {16, "[SUFFIX]"},      {17, "[SYSTEM_PROMPT]"}, {18, "[/SYSTEM_PROMPT]"},
    {19, "[TOOL_CONTENT]"}};

QByteArray read_file(const std::filesystem::path& path) {
  QFile file(QString::fromStdString(path.string()));
  if (!file.open(QIODevice::ReadOnly)) throw std::runtime_error("cannot read " + path.string());
  return file.readAll();
}

void write_file(const std::filesystem::path& path, const QByteArray& bytes) {
  QFile file(QString::fromStdString(path.string()));
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) || file.write(bytes) != bytes.size())
    throw std::runtime_error("cannot write " + path.string());
}

QJsonObject object_of(const std::filesystem::path& path) {
  const QJsonDocument document = QJsonDocument::fromJson(read_file(path));
  if (!document.isObject()) throw std::runtime_error(path.string() + " is not a JSON object");
  return document.object();
}

}  // namespace

void write_mistral_small_tokenizer(const std::filesystem::path& nemo_dir,
                                   const std::filesystem::path& chat_template,
                                   const std::filesystem::path& out_dir) {
  std::filesystem::create_directories(out_dir);
  QJsonObject tokenizer = object_of(nemo_dir / "tokenizer.json");
  QJsonArray added = tokenizer.value("added_tokens").toArray();
  QJsonObject model = tokenizer.value("model").toObject();
  QJsonObject vocab = model.value("vocab").toObject();
  QJsonObject config = object_of(nemo_dir / "tokenizer_config.json");
  QJsonObject decoder = config.value("added_tokens_decoder").toObject();
  for (const Renamed& control : kMistralSmallControls) {
    for (qsizetype i = 0; i < added.size(); ++i) {
      QJsonObject token = added.at(i).toObject();
      if (token.value("id").toInt() != control.id) continue;
      vocab.remove(token.value("content").toString());
      token["content"] = QString::fromLatin1(control.content);
      added[i] = token;
    }
    vocab[QString::fromLatin1(control.content)] = control.id;
    const QString key = QString::number(control.id);
    QJsonObject entry = decoder.value(key).toObject();
    entry["content"] = QString::fromLatin1(control.content);
    decoder[key] = entry;
  }
  model["vocab"] = vocab;
  tokenizer["model"] = model;
  tokenizer["added_tokens"] = added;
  config["added_tokens_decoder"] = decoder;
  config.remove("chat_template");
  write_file(out_dir / "tokenizer.json", QJsonDocument(tokenizer).toJson(QJsonDocument::Compact));
  write_file(out_dir / "tokenizer_config.json",
             QJsonDocument(config).toJson(QJsonDocument::Compact));
  write_file(out_dir / "chat_template.jinja", read_file(chat_template));
}

}  // namespace quire::test
