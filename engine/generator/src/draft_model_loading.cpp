#include <string>

#include "quire/engine/generator/draft_model.h"
#include "quire/engine/generator/vocabulary_check.h"

namespace quire::engine {

LoadedDraftModel::LoadedDraftModel(const std::filesystem::path& directory, ModelRuntime& target,
                                   const Tokenizer& tokenizer, kernels::Backend& backend) {
  description_ = std::make_shared<const ModelDescription>(ModelDescription::open(directory));
  // Before any weight is read: a draft that cannot share the model's
  // tokens is refused at once.
  const Tokenizer draft_tokenizer = Tokenizer::load(directory);
  check_tokenizer_fits_model(draft_tokenizer, *description_);
  check_draft_tokenizer(tokenizer, draft_tokenizer, target.model().directory.string(),
                        directory.string());
  runtime_ = std::make_unique<ModelRuntime>(description_, backend, draft_runtime_options(target));
  drafter_ = std::make_unique<DraftModel>(*runtime_, tokenizer.vocab_size());
}

LoadedDraftModel::~LoadedDraftModel() = default;

}  // namespace quire::engine
