#include "hf_tokenizer.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "added_vocabulary.h"
#include "bpe_model.h"
#include "decoders.h"
#include "normalizers.h"
#include "post_processor.h"
#include "pre_tokenizers.h"
#include "quire/engine/model_error.h"
#include "utf8.h"

namespace quire::engine::detail {
namespace {

// nlohmann's messages start with "[json.exception.parse_error.101] "; the
// rest ("parse error at line 3, column 1: ...") is what a user needs.
std::string without_exception_id(const std::string& message) {
  const auto end = message.find("] ");
  return !message.empty() && message.front() == '[' && end != std::string::npos
             ? message.substr(end + 2)
             : message;
}

// transformers' clean_up_tokenization, in its order: the space before
// punctuation and English contractions goes.
void clean_up_tokenization_spaces(std::string& text) {
  static constexpr std::pair<std::string_view, std::string_view> kRules[] = {
      {" .", "."},     {" ?", "?"},   {" !", "!"},   {" ,", ","},     {" ' ", "'"},
      {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [from, to] : kRules) {
    std::size_t position = 0;
    while ((position = text.find(from, position)) != std::string::npos) {
      text.replace(position, from.size(), to);
      position += to.size();
    }
  }
}

class HfTokenizer final : public TokenizerImpl {
 public:
  std::unique_ptr<Normalizer> normalizer;
  std::unique_ptr<PreTokenizer> pre_tokenizer;
  std::unique_ptr<BpeModel> model;
  AddedVocabulary added;
  PostProcessor post_processor;
  std::unique_ptr<Decoder> decoder;
  std::vector<PieceKind> kinds;
  StringIds piece_ids;  // model vocabulary and added tokens, added ones winning
  // The configuration asks for BOS where the post-processor does not add it.
  bool prepend_bos = false;

  std::vector<std::int32_t> encode(std::string_view text,
                                   const EncodeOptions& options) const override {
    // Hugging Face only ever sees valid text; broken bytes become U+FFFD.
    std::string repaired;
    if (!is_valid_utf8(text)) {
      repaired = to_valid_utf8(text);
      text = repaired;
    }
    std::vector<std::int32_t> ids;
    ids.reserve(text.size() / 3 + 4);
    auto to_model = [&](PreToken&& word) { model->tokenize(word.text, ids); };
    const PreTokenSink sink(to_model);
    for (Segment& segment :
         added.split(text, normalizer.get(), options.parse_special,
                     options.parse_special ? options.literal : std::span<const TextRange>{})) {
      if (segment.id >= 0) {
        ids.push_back(segment.id);
      } else if (pre_tokenizer) {
        pre_tokenizer->pre_tokenize({std::move(segment.text), segment.at_start}, sink);
      } else {
        model->tokenize(segment.text, ids);
      }
    }
    if (options.add_special) {
      post_processor.apply(ids);
      if (prepend_bos && special.bos) ids.insert(ids.begin(), *special.bos);
    }
    return ids;
  }

  std::string decode(std::span<const std::int32_t> ids, bool skip_special) const override {
    DecodedPieces pieces;
    pieces.reserve(ids.size());
    for (const std::int32_t id : ids) {
      check_id(id, vocab_size());
      if (const AddedToken* token = added.by_id(id)) {
        if (!(skip_special && token->special)) pieces.push_back({token->content, true});
      } else if (const std::string* text = model->token(id)) {
        pieces.push_back({*text, false});
      }
    }
    if (decoder) decoder->decode_chain(pieces);
    std::string text;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      if (!decoder && i > 0) text += ' ';
      text += pieces[i].text;
    }
    if (special.clean_up_spaces) clean_up_tokenization_spaces(text);
    return text;
  }

  int vocab_size() const override { return static_cast<int>(kinds.size()); }

  std::string piece(std::int32_t id) const override {
    check_id(id, vocab_size());
    if (const AddedToken* token = added.by_id(id)) return token->content;
    if (const std::string* text = model->token(id)) return *text;
    return {};
  }

  std::optional<std::int32_t> find_piece(std::string_view piece) const override {
    const auto it = piece_ids.find(piece);
    if (it == piece_ids.end()) return std::nullopt;
    return it->second;
  }

  PieceKind kind(std::int32_t id) const override {
    check_id(id, vocab_size());
    return kinds[static_cast<std::size_t>(id)];
  }

  std::optional<std::uint8_t> byte_value(std::int32_t id) const override {
    if (kind(id) != PieceKind::Byte) return std::nullopt;
    const std::string* text = model->token(id);
    return static_cast<std::uint8_t>(std::stoi(text->substr(3, 2), nullptr, 16));
  }

  std::string token_bytes(std::int32_t id) const override {
    if (const auto byte = byte_value(id)) return std::string(1, static_cast<char>(*byte));
    const AddedToken* added_token = added.by_id(id);
    if (added_token && added_token->special) return {};
    if (!added_token && kinds[static_cast<std::size_t>(id)] != PieceKind::Normal) return {};
    const std::string* text = added_token ? &added_token->content : model->token(id);
    if (!text) return {};
    std::string bytes = *text;
    if (decoder) decoder->token_bytes(bytes, added_token != nullptr);
    return bytes;
  }

  std::string description() const override {
    const bool byte_level = pre_tokenizer && pre_tokenizer->byte_level();
    const auto special_count = std::count_if(added.tokens().begin(), added.tokens().end(),
                                             [](const AddedToken& token) { return token.special; });
    std::string style = byte_level               ? "byte-level"
                        : model->byte_fallback() ? "SentencePiece-style, byte fallback"
                                                 : "SentencePiece-style";
    return "tokenizer.json, BPE (" + style + "), " + std::to_string(kinds.size()) + " tokens, " +
           std::to_string(added.tokens().size()) + " added (special " +
           std::to_string(special_count) + ")";
  }
};

bool is_byte_piece(const std::string& text) {
  if (text.size() != 6 || !text.starts_with("<0x") || text[5] != '>') return false;
  return std::isxdigit(static_cast<unsigned char>(text[3])) &&
         std::isxdigit(static_cast<unsigned char>(text[4]));
}

void read_model(const JsonField& root, HfTokenizer& tokenizer, std::size_t added_count) {
  const JsonField model = root.at("model");
  model.require_object();
  std::string type;
  if (const auto field = model.find("type")) {
    type = field->string();
  } else if (model.find("merges")) {
    type = "BPE";  // files from before "type" was written
  }
  if (type == "BPE") {
    tokenizer.model = BpeModel::read(model, added_count);
    return;
  }
  if (type == "WordPiece" || type == "Unigram" || type == "WordLevel") {
    throw ModelError(model.file() + " uses a " + type +
                     " model, which Quire does not read yet; Quire reads BPE tokenizers (Llama "
                     "3, Qwen, Mistral, Gemma, GPT-2 and their kin)");
  }
  model.fail_unsupported(type.empty() ? "has no \"type\""
                                      : "has the unknown type \"" + type + "\"");
}

}  // namespace

std::unique_ptr<TokenizerImpl> load_hf_tokenizer(const std::string& json_text,
                                                 const std::filesystem::path& path,
                                                 const std::filesystem::path* model_dir) {
  const std::string file = path.string();
  Json document;
  try {
    document = Json::parse(json_text);
  } catch (const Json::exception& error) {
    throw ModelError(file + " is not valid JSON (" + without_exception_id(error.what()) +
                     "); repair the file or download it again");
  }
  const JsonField root(document, "", file);
  if (!document.is_object()) throw ModelError(file + " must hold a JSON object");

  auto tokenizer = std::make_unique<HfTokenizer>();
  const auto added_list = root.find("added_tokens");
  const std::size_t added_count = added_list ? added_list->size() : 0;
  read_model(root, *tokenizer, added_count);
  const Json null_value;
  auto component = [&](const char* key) {
    const auto field = root.find(key);
    return field ? *field : JsonField(null_value, key, file);
  };
  tokenizer->normalizer = read_normalizer(component("normalizer"));
  tokenizer->pre_tokenizer = read_pre_tokenizer(component("pre_tokenizer"));
  tokenizer->post_processor = read_post_processor(component("post_processor"));
  tokenizer->decoder = read_decoder(component("decoder"));
  if (added_list) {
    // Added tokens follow the vocabulary in real files (Llama 3's 256 after
    // its 128000); allow holes, but not without bound.
    const std::size_t bound =
        static_cast<std::size_t>(tokenizer->model->size()) + 2 * added_count + 1024;
    const auto max_id = static_cast<std::int32_t>(
        std::min<std::size_t>(bound, std::numeric_limits<std::int32_t>::max()));
    tokenizer->added = AddedVocabulary(*added_list, tokenizer->normalizer.get(), max_id);
  }

  // Kinds, and the table find_piece() reads.
  const BpeModel& model = *tokenizer->model;
  const int size = std::max(model.size(), tokenizer->added.max_id() + 1);
  if (size <= 0) throw ModelError(file + " has an empty vocabulary; download the file again");
  tokenizer->kinds.assign(static_cast<std::size_t>(size), PieceKind::Unused);
  tokenizer->piece_ids.reserve(model.entries() + added_count);
  for (std::int32_t id = 0; id < model.size(); ++id) {
    const std::string* text = model.token(id);
    if (!text) continue;
    PieceKind kind = PieceKind::Normal;
    if (model.unknown() == id) {
      kind = PieceKind::Unknown;
    } else if (model.byte_fallback() && is_byte_piece(*text)) {
      kind = PieceKind::Byte;
    }
    tokenizer->kinds[static_cast<std::size_t>(id)] = kind;
    tokenizer->piece_ids.emplace(*text, id);
  }
  for (const AddedToken& token : tokenizer->added.tokens()) {
    const auto index = static_cast<std::size_t>(token.id);
    if (const std::string* text = model.token(token.id); text && *text != token.content) {
      throw ModelError(one_line(file + ": added token " + std::to_string(token.id) + " is \"" +
                                token.content + "\", but the vocabulary gives that id to \"" +
                                *text + "\"") +
                       "; the file is inconsistent, download it again");
    }
    tokenizer->kinds[index] = token.special ? PieceKind::Control : PieceKind::Normal;
    tokenizer->piece_ids.insert_or_assign(token.content, token.id);
  }
  for (const auto& ids : {tokenizer->post_processor.before, tokenizer->post_processor.after}) {
    for (const std::int32_t id : ids) {
      if (id >= size) {
        throw ModelError(file + ": the post-processor adds token " + std::to_string(id) +
                         ", outside the vocabulary of " + std::to_string(size) +
                         " tokens; download the file again");
      }
    }
  }

  if (model_dir) {
    VocabularyView vocabulary;
    vocabulary.source = "tokenizer.json";
    vocabulary.size = size;
    const HfTokenizer& view = *tokenizer;
    vocabulary.find = [&view](std::string_view piece) { return view.find_piece(piece); };
    tokenizer->special = resolve_special_tokens(*model_dir, vocabulary);
  }
  // transformers' PreTrainedTokenizerFast adds what tokenizer.json's
  // post-processor adds; LlamaTokenizerFast and GemmaTokenizerFast rebuild
  // that post-processor from tokenizer_config.json's add_bos_token. So BOS is
  // added when either asks for it.
  auto& special = tokenizer->special;
  const auto& before = tokenizer->post_processor.before;
  const bool post_adds_bos =
      special.bos && std::find(before.begin(), before.end(), *special.bos) != before.end();
  tokenizer->prepend_bos = !post_adds_bos && special.bos && special.add_bos_setting.value_or(false);
  special.add_bos = special.bos && (post_adds_bos || special.add_bos_setting.value_or(false));
  return tokenizer;
}

}  // namespace quire::engine::detail
