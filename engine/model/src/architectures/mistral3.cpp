// Mistral3ForConditionalGeneration (Mistral Small 3.1 and 3.2): a Mistral
// language model beside a Pixtral vision tower and a patch-merging projector
// (engine/vision). The language model's keys sit under "text_config" (a
// MistralConfig: a file that leaves "sliding_window" out slides over 4096
// tokens; the published files write null and attend fully), its tensors
// under "language_model.model." as mistralai publishes them or
// "model.language_model." as transformers 4.52 and later save them, and the
// output projection is "language_model.lm_head" or "lm_head" accordingly
// (transformers' _checkpoint_conversion_mapping for Mistral3). Image
// embeddings replace the [IMG] positions' rows unscaled, as the text
// embeddings are not scaled either, and attention stays causal throughout.
// Ministral 3's downloads use the same class with a "ministral3" text model
// (YaRN and a position-dependent query scale), which is refused by name.

#include "architectures.h"

namespace quire::engine::architectures {

const Architecture& mistral3_multimodal() {
  static const Architecture architecture{
      .name = "Mistral3ForConditionalGeneration",
      .label = "Mistral 3 (multimodal)",
      .apply = apply_mistral_layers,
      .defaults = R"({"sliding_window": 4096})",
      .text_prefixes = {"language_model.model.", "model.language_model."},
      .heads = {"language_model.lm_head", "lm_head"},
      .multimodal = true,
      .text_model_types = {"mistral"}};
  return architecture;
}

}  // namespace quire::engine::architectures
