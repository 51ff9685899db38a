#include "tokenizer_json_support.h"

#include <QString>

#include "quire/engine/tokenizer/detail/tokenizer_json_text.h"

namespace quire::test {

Json bpe_model(const QByteArrayList& tokens, const Json& merges, bool with_unknown) {
  Json vocab = Json::object();
  if (with_unknown) vocab["<unk>"] = 0;
  for (const QByteArray& token : tokens) {
    const std::string text = token.toStdString();
    if (!vocab.contains(text)) vocab[text] = static_cast<int>(vocab.size());
  }
  Json model = {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}};
  if (with_unknown) model["unk_token"] = "<unk>";
  return model;
}

Json words_model(const QByteArrayList& words) {
  QByteArrayList tokens;
  for (const QByteArray& word : words) {
    for (const char32_t c : QString::fromUtf8(word).toUcs4())
      tokens << QString::fromUcs4(&c, 1).toUtf8();
  }
  tokens << words;
  Json model = bpe_model(tokens);
  model["ignore_merges"] = true;
  return model;
}

Json tokenizer_json(const Json& model, const QByteArray& normalizer,
                    const QByteArray& pre_tokenizer, const QByteArray& post_processor,
                    const QByteArray& decoder, const QByteArray& added_tokens) {
  Json tokenizer = {{"version", "1.0"}, {"model", model}};
  auto set = [&](const char* key, const QByteArray& text) {
    if (!text.isEmpty()) tokenizer[key] = Json::parse(text.toStdString());
  };
  set("normalizer", normalizer);
  set("pre_tokenizer", pre_tokenizer);
  set("post_processor", post_processor);
  set("decoder", decoder);
  set("added_tokens", added_tokens);
  return tokenizer;
}

engine::Tokenizer load_json(const Json& tokenizer) {
  return engine::detail::load_tokenizer_json_text(tokenizer.dump());
}

QByteArrayList pieces(const engine::Tokenizer& tokenizer, std::span<const std::int32_t> ids) {
  QByteArrayList list;
  for (const std::int32_t id : ids)
    list << QByteArray::fromStdString(tokenizer.piece(id));
  return list;
}

QList<int> to_list(const std::vector<std::int32_t>& ids) {
  return QList<int>(ids.begin(), ids.end());
}

std::vector<std::int32_t> to_ids(const QList<int>& list) {
  return std::vector<std::int32_t>(list.begin(), list.end());
}

}  // namespace quire::test
