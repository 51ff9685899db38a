#include "special_tokens.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "quire/engine/model_error.h"

namespace quire::engine::detail {
namespace {

using Json = nlohmann::json;

struct ConfigFile {
  std::filesystem::path path;
  Json root;  // always an object

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw ModelError(path.string() + ": \"" + key + "\" " + what);
  }
};

// nlohmann's messages start with "[json.exception.parse_error.101] "; the
// rest ("parse error at line 3, column 1: ...") is what a user needs.
std::string without_exception_id(const std::string& message) {
  const auto end = message.find("] ");
  return message.front() == '[' && end != std::string::npos ? message.substr(end + 2) : message;
}

std::optional<ConfigFile> read_config(const std::filesystem::path& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return std::nullopt;
  std::ifstream file(path, std::ios::binary);
  if (!file) throw ModelError("cannot read " + path.string() + "; check its permissions");
  std::ostringstream text;
  text << file.rdbuf();
  ConfigFile config{path, {}};
  try {
    config.root = Json::parse(text.str());
  } catch (const Json::exception& parse_error) {
    throw ModelError(path.string() + " is not valid JSON (" +
                     without_exception_id(parse_error.what()) +
                     "); repair the file or download it again");
  }
  if (!config.root.is_object()) throw ModelError(path.string() + " must hold a JSON object");
  return config;
}

// A value and the name it is reported under ("text_config.eos_token_id").
struct Entry {
  const Json* value = nullptr;
  std::string key;
};

std::optional<Entry> find(const Json& object, const std::string& key, const std::string& prefix) {
  const auto it = object.find(key);
  // null means "not set" in Hugging Face configurations; the next source decides.
  if (it == object.end() || it->is_null()) return std::nullopt;
  return Entry{&*it, prefix + key};
}

std::optional<Entry> find_with_text_config(const Json& root, const std::string& key) {
  if (auto entry = find(root, key, "")) return entry;
  const auto text = root.find("text_config");
  if (text == root.end() || !text->is_object()) return std::nullopt;
  return find(*text, key, "text_config.");
}

std::int32_t checked_id(const ConfigFile& file, const Entry& entry, const Json& value,
                        const VocabularyView& vocabulary) {
  if (!value.is_number_integer()) {
    file.fail(entry.key, "must be a token id (an integer), not " + value.dump());
  }
  const std::int64_t id = value.get<std::int64_t>();
  if (id < 0 || id >= vocabulary.size) {
    file.fail(entry.key, "is " + std::to_string(id) + ", but " + vocabulary.source + " has " +
                             std::to_string(vocabulary.size) + " tokens (ids 0 to " +
                             std::to_string(vocabulary.size - 1) +
                             "); the configuration does not belong to this tokenizer");
  }
  return static_cast<std::int32_t>(id);
}

// An id, or for EOS also a list of ids; an empty list counts as not set.
std::optional<std::vector<std::int32_t>> read_ids(const ConfigFile& file,
                                                  const std::optional<Entry>& entry,
                                                  bool allow_list,
                                                  const VocabularyView& vocabulary) {
  if (!entry) return std::nullopt;
  const Json& value = *entry->value;
  if (!value.is_array()) return std::vector{checked_id(file, *entry, value, vocabulary)};
  if (!allow_list) file.fail(entry->key, "must be a single token id, not " + value.dump());
  std::vector<std::int32_t> ids;
  for (const Json& element : value) {
    const std::int32_t id = checked_id(file, *entry, element, vocabulary);
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
  if (ids.empty()) return std::nullopt;
  return ids;
}

// tokenizer_config.json names tokens by text: "</s>" or {"content": "</s>", ...}.
std::optional<std::int32_t> read_token_name(const ConfigFile& file, const std::string& key,
                                            const VocabularyView& vocabulary) {
  const auto entry = find(file.root, key, "");
  if (!entry) return std::nullopt;
  const Json* name = entry->value;
  if (name->is_object()) {
    const auto content = name->find("content");
    name = content == name->end() ? nullptr : &*content;
  }
  if (!name || !name->is_string()) {
    file.fail(key,
              "must be a token's text or an object with \"content\", not " + entry->value->dump());
  }
  const std::string text = name->get<std::string>();
  if (auto id = vocabulary.find(text)) return id;
  file.fail(key, "is \"" + text + "\", which is not in " + vocabulary.source +
                     "'s vocabulary; the configuration does not belong to this tokenizer");
}

// {"added_tokens_decoder": {"128000": {"content": "<|begin_of_text|>", "special": true, ...}}}
std::vector<std::string> configured_special_tokens(const ConfigFile& file) {
  std::vector<std::string> names;
  const auto decoder = file.root.find("added_tokens_decoder");
  if (decoder == file.root.end() || !decoder->is_object()) return names;
  for (const auto& [id, token] : decoder->items()) {
    if (!token.is_object()) continue;
    const auto content = token.find("content");
    const auto special = token.find("special");
    if (content == token.end() || !content->is_string()) continue;
    if (special == token.end() || !special->is_boolean() || !special->get<bool>()) continue;
    names.push_back(content->get<std::string>());
  }
  return names;
}

}  // namespace

SpecialTokens resolve_special_tokens(const std::filesystem::path& model_dir,
                                     const VocabularyView& vocabulary) {
  const auto generation = read_config(model_dir / "generation_config.json");
  const auto model = read_config(model_dir / "config.json");
  const auto tokenizer = read_config(model_dir / "tokenizer_config.json");

  std::optional<std::vector<std::int32_t>> bos;
  std::optional<std::vector<std::int32_t>> eos;
  // Each key independently: the first source that sets it wins.
  auto take_ids = [&](const std::optional<ConfigFile>& file, bool text_config) {
    if (!file) return;
    auto lookup = [&](const std::string& key) {
      return text_config ? find_with_text_config(file->root, key) : find(file->root, key, "");
    };
    if (!bos) bos = read_ids(*file, lookup("bos_token_id"), false, vocabulary);
    if (!eos) eos = read_ids(*file, lookup("eos_token_id"), true, vocabulary);
  };
  take_ids(generation, false);
  take_ids(model, true);

  SpecialTokens tokens;
  if (bos) tokens.bos = bos->front();
  if (eos) tokens.eos = std::move(*eos);
  if (tokenizer) {
    if (!tokens.bos) tokens.bos = read_token_name(*tokenizer, "bos_token", vocabulary);
    if (tokens.eos.empty()) {
      if (auto id = read_token_name(*tokenizer, "eos_token", vocabulary)) tokens.eos = {*id};
    }
  }
  if (!tokens.bos) tokens.bos = vocabulary.model_bos;
  if (tokens.eos.empty() && vocabulary.model_eos) tokens.eos = {*vocabulary.model_eos};

  // SentencePiece models of the Llama family start every prompt with BOS
  // unless the tokenizer configuration says otherwise.
  tokens.add_bos = tokens.bos.has_value();
  if (tokenizer) {
    if (const auto entry = find(tokenizer->root, "add_bos_token", "")) {
      if (!entry->value->is_boolean()) {
        tokenizer->fail(entry->key, "must be true or false, not " + entry->value->dump());
      }
      tokens.add_bos_setting = entry->value->get<bool>();
      tokens.add_bos = tokens.bos && *tokens.add_bos_setting;
    }
    tokens.configured_special = configured_special_tokens(*tokenizer);
    if (const auto entry = find(tokenizer->root, "clean_up_tokenization_spaces", "")) {
      if (!entry->value->is_boolean()) {
        tokenizer->fail(entry->key, "must be true or false, not " + entry->value->dump());
      }
      tokens.clean_up_spaces = entry->value->get<bool>();
    }
  }
  return tokens;
}

}  // namespace quire::engine::detail
