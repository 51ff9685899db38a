#include "quire/engine/tokenizer/tokenizer.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "hf/hf_tokenizer.h"
#include "quire/engine/model_error.h"
#include "quire/engine/tokenizer/detail/tokenizer_json_text.h"
#include "sentencepiece_tokenizer.h"
#include "tokenizer_impl.h"

namespace quire::engine {
namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw ModelError("cannot read " + path.string() + "; check its permissions");
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

void reject_lfs_pointer(const std::string& data, const std::filesystem::path& path) {
  if (data.starts_with("version https://git-lfs")) {
    throw ModelError(path.string() +
                     " is a Git LFS pointer, not the tokenizer itself; run \"git lfs pull\" "
                     "in the model directory or download the file again");
  }
}

}  // namespace

Tokenizer::Tokenizer(std::unique_ptr<detail::TokenizerImpl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

Tokenizer Tokenizer::load(const std::filesystem::path& model_dir) {
  std::error_code error;
  if (!std::filesystem::is_directory(model_dir, error)) {
    throw ModelError("model directory " + model_dir.string() + " does not exist");
  }
  // tokenizer.json wins over tokenizer.model: it is what transformers'
  // AutoTokenizer loads, with the added tokens, normalizer and
  // post-processor the model's chat template and published ids were made
  // with (see the class comment).
  const std::filesystem::path json_path = model_dir / "tokenizer.json";
  if (std::filesystem::exists(json_path, error)) {
    const std::string data = read_file(json_path);
    reject_lfs_pointer(data, json_path);
    return TokenizerFactory::make(detail::load_hf_tokenizer(data, json_path, &model_dir));
  }
  const std::filesystem::path model_path = model_dir / "tokenizer.model";
  if (!std::filesystem::exists(model_path, error)) {
    throw ModelError("no tokenizer.json or tokenizer.model in " + model_dir.string() +
                     ": Quire reads Hugging Face tokenizer.json and SentencePiece "
                     "tokenizer.model files; copy the model's tokenizer files into the directory "
                     "or download the model again");
  }
  const std::string data = read_file(model_path);
  reject_lfs_pointer(data, model_path);
  return TokenizerFactory::make(detail::load_sentencepiece(data, model_path, model_dir));
}

namespace detail {
Tokenizer load_tokenizer_json_text(std::string_view json_text) {
  return TokenizerFactory::make(
      load_hf_tokenizer(std::string(json_text), "tokenizer.json", nullptr));
}
}  // namespace detail

std::vector<std::int32_t> Tokenizer::encode(std::string_view text,
                                            const EncodeOptions& options) const {
  return impl_->encode(text, options);
}

std::vector<std::int32_t> Tokenizer::encode(std::string_view text, bool add_bos) const {
  return impl_->encode(text, EncodeOptions{.add_special = add_bos});
}

std::string Tokenizer::decode(std::span<const std::int32_t> ids) const {
  return impl_->decode(ids, true);
}

std::string Tokenizer::decode(std::span<const std::int32_t> ids, bool skip_special) const {
  return impl_->decode(ids, skip_special);
}

std::optional<std::int32_t> Tokenizer::bos() const {
  return impl_->special.bos;
}
const std::vector<std::int32_t>& Tokenizer::eos() const {
  return impl_->special.eos;
}
bool Tokenizer::is_eos(std::int32_t id) const {
  const auto& eos = impl_->special.eos;
  return std::find(eos.begin(), eos.end(), id) != eos.end();
}
bool Tokenizer::adds_bos() const {
  return impl_->special.add_bos;
}
int Tokenizer::vocab_size() const {
  return impl_->vocab_size();
}
std::string Tokenizer::piece(std::int32_t id) const {
  return impl_->piece(id);
}
std::optional<std::int32_t> Tokenizer::find_piece(std::string_view piece) const {
  return impl_->find_piece(piece);
}
PieceKind Tokenizer::kind(std::int32_t id) const {
  return impl_->kind(id);
}
std::optional<std::uint8_t> Tokenizer::byte_value(std::int32_t id) const {
  return impl_->byte_value(id);
}
std::string Tokenizer::token_bytes(std::int32_t id) const {
  return impl_->token_bytes(id);
}
std::string Tokenizer::description() const {
  return impl_->description();
}

}  // namespace quire::engine
