// config.json from a published file (--config-from): the file as written,
// with the small shapes, ids inside the small vocabulary, and the keys of any
// setting the spec changes against the file (see published_config.h).

#include <algorithm>
#include <functional>
#include <map>

#include "config_parts.h"
#include "quire/engine/modelgen/published_config.h"

namespace quire::engine::modelgen::detail {
namespace {

bool keys_sorted(const Json& object) {
  std::string previous;
  for (const auto& [key, value] : object.items()) {
    if (key < previous) return false;
    previous = key;
  }
  return true;
}

// A new key goes where the file's tools would put it: in order when the
// file's keys are sorted (transformers sorts them), at the end otherwise.
void insert_key(Json& object, const std::string& key, const Json& value) {
  if (!keys_sorted(object)) {
    object[key] = value;
    return;
  }
  Json rebuilt = Json::object();
  bool placed = false;
  for (const auto& [existing, existing_value] : object.items()) {
    if (!placed && key < existing) {
      rebuilt[key] = value;
      placed = true;
    }
    rebuilt[existing] = existing_value;
  }
  if (!placed) rebuilt[key] = value;
  object = std::move(rebuilt);
}

// Replaces a key in place; adds one the file lacks unless the reader's
// default for the missing key (`absent`) already says the same.
void put(Json& object, const std::string& key, const Json& value,
         const Json& absent = Json::object()) {
  if (object.contains(key)) {
    object[key] = value;
  } else if (value != absent) {
    insert_key(object, key, value);
  }
}

// The defaults readers take for keys a file leaves out, where they matter.
const Json& gemma3_text_default(const std::string& key) {
  static const std::map<std::string, Json> defaults = {{"vocab_size", 262208},
                                                       {"hidden_size", 2304},
                                                       {"intermediate_size", 9216},
                                                       {"num_hidden_layers", 26},
                                                       {"num_attention_heads", 8},
                                                       {"num_key_value_heads", 4},
                                                       {"head_dim", 256},
                                                       {"max_position_embeddings", 131072},
                                                       {"rms_norm_eps", 1e-6},
                                                       {"rope_theta", 1e6},
                                                       {"rope_local_base_freq", 10000.0},
                                                       {"query_pre_attn_scalar", 256},
                                                       {"sliding_window", 4096},
                                                       {"sliding_window_pattern", 6},
                                                       {"attn_logit_softcapping", nullptr},
                                                       {"final_logit_softcapping", nullptr},
                                                       {"rope_scaling", nullptr}};
  static const Json kNone = Json::object();
  const auto found = defaults.find(key);
  return found != defaults.end() ? found->second : kNone;
}

const Json& siglip_default(const std::string& key) {
  static const std::map<std::string, Json> defaults = {
      {"hidden_size", 768},        {"intermediate_size", 3072}, {"num_hidden_layers", 12},
      {"num_attention_heads", 12}, {"image_size", 224},         {"patch_size", 16}};
  static const Json kNone = Json::object();
  const auto found = defaults.find(key);
  return found != defaults.end() ? found->second : kNone;
}

class PublishedWriter {
 public:
  PublishedWriter(const RandomModelSpec& spec, const SpecialIds& ids)
      : spec_(spec),
        ids_(ids),
        file_(spec_from_published_config_text(spec.published_config, "config.json")),
        root_(Json::parse(spec.published_config)),
        generated_(generated_config(spec, ids)),
        generated_text_(spec.multimodal ? gemma_text_config(spec, ids) : generated_) {
    if (spec.multimodal && !root_["text_config"].is_object()) root_["text_config"] = Json::object();
  }

  Json write() {
    shapes();
    changed_settings();
    token_ids();
    return std::move(root_);
  }

 private:
  Json& text() { return spec_.multimodal ? root_["text_config"] : root_; }

  const Json& absent_text(const std::string& key) const {
    static const Json kNone = Json::object();
    return spec_.multimodal ? gemma3_text_default(key) : kNone;
  }

  void put_text(const std::string& key, const Json& value) {
    put(text(), key, value, absent_text(key));
  }

  void shapes() {
    const std::string& a = spec_.architecture;
    put_text("hidden_size", spec_.hidden);
    put_text("num_hidden_layers", spec_.layers);
    put_text("num_attention_heads", spec_.heads);
    put_text("num_key_value_heads", spec_.kv_heads);
    if (a != "phi3") {
      // A head_dim that hidden / heads gives needs no key (Gemma's default is 256).
      const bool gemma = a == "gemma2" || a == "gemma3";
      const Json derived = gemma ? Json(256) : Json(spec_.hidden / spec_.heads);
      put(text(), "head_dim", spec_.resolved_head_dim(),
          spec_.multimodal ? gemma3_text_default("head_dim") : derived);
    }
    put_text("intermediate_size", spec_.intermediate);
    put_text("vocab_size", spec_.vocab);
    if (a == "mixtral") put_text("num_local_experts", spec_.moe.experts);
    if (a == "qwen3_moe") {
      put_text("num_experts", spec_.moe.experts);
      put_text("moe_intermediate_size", spec_.resolved_expert_intermediate());
    }
    layer_types();
    longrope_lists();
    if (spec_.multimodal) vision();
  }

  // One entry per layer: Gemma's from its pattern, others' cut or extended.
  void layer_types() {
    Json& object = text();
    const bool written = object.contains("layer_types") && object["layer_types"].is_array();
    if (!written && !spec_.write_layer_types) return;
    if (generated_text_.contains("layer_types")) {
      put(object, "layer_types", generated_text_["layer_types"]);
      return;
    }
    Json types = written ? object["layer_types"] : Json::array();
    while (types.size() > static_cast<std::size_t>(spec_.layers))
      types.erase(types.size() - 1);
    while (types.size() < static_cast<std::size_t>(spec_.layers))
      types.push_back("full_attention");
    put(object, "layer_types", types);
  }

  // rotary_dim / 2 factors each: the file's first ones, or drawn when it has too few.
  void longrope_lists() {
    if (spec_.rope_scaling.type != RopeScalingSpec::Type::LongRope) return;
    if (spec_.rope_scaling != file_.rope_scaling) return;  // rewritten whole below
    Json& scaling = text()["rope_scaling"];
    if (!scaling.is_object()) return;
    const std::size_t wanted = static_cast<std::size_t>(spec_.rotary_dim() / 2);
    const LongRopeFactors drawn = longrope_factors(spec_);
    for (const char* key : {"long_factor", "short_factor"}) {
      if (!scaling.contains(key) || !scaling[key].is_array()) continue;
      Json& list = scaling[key];
      if (list.size() >= wanted) {
        while (list.size() > wanted)
          list.erase(list.size() - 1);
      } else {
        list = std::string(key) == "long_factor" ? drawn.long_factor : drawn.short_factor;
      }
    }
  }

  void vision() {
    Json& config = root_["vision_config"];
    if (!config.is_object()) config = Json::object();
    const VisionSpec& vision = spec_.vision;
    const std::pair<const char*, int> values[] = {{"hidden_size", vision.hidden},
                                                  {"image_size", vision.image_size},
                                                  {"intermediate_size", vision.intermediate},
                                                  {"num_attention_heads", vision.heads},
                                                  {"num_hidden_layers", vision.layers},
                                                  {"patch_size", vision.patch_size}};
    for (const auto& [key, value] : values)
      put(config, key, value, siglip_default(key));
    put(root_, "mm_tokens_per_image", vision.tokens_per_image, Json(256));
  }

  // The keys of a setting, taken from the generated file: set where it has
  // them, removed where it does not.
  void copy(Json& object, const Json& generated, std::initializer_list<const char*> keys) {
    for (const char* key : keys) {
      if (generated.contains(key)) {
        put(object, key, generated[key], &object == &text() ? absent_text(key) : Json::object());
      } else {
        object.erase(key);
      }
    }
  }

  void changed_settings() {
    const RandomModelSpec& s = spec_;
    const RandomModelSpec& f = file_;
    const auto text_keys = [&](bool changed, std::initializer_list<const char*> keys) {
      if (changed) copy(text(), generated_text_, keys);
    };
    text_keys(s.rope_theta != f.rope_theta, {"rope_theta"});
    text_keys(s.rms_norm_eps != f.rms_norm_eps, {"rms_norm_eps"});
    text_keys(s.max_position_embeddings != f.max_position_embeddings, {"max_position_embeddings"});
    text_keys(s.rope_scaling != f.rope_scaling, {"rope_scaling"});
    if (s.architecture == "phi3" && s.rope_scaling != f.rope_scaling) {
      copy(root_, generated_, {"original_max_position_embeddings"});
    }
    text_keys(s.sliding_window != f.sliding_window,
              {"sliding_window", "sliding_window_size", "use_sliding_window", "max_window_layers"});
    text_keys(s.softcap.attention != f.softcap.attention, {"attn_logit_softcapping"});
    text_keys(s.softcap.final != f.softcap.final, {"final_logit_softcapping"});
    text_keys(s.resolved_query_pre_attn_scalar() != f.resolved_query_pre_attn_scalar(),
              {"query_pre_attn_scalar"});
    text_keys(s.rope_local_theta != f.rope_local_theta, {"rope_local_base_freq"});
    text_keys(s.architecture == "gemma3" &&
                  s.resolved_sliding_window_pattern() != f.resolved_sliding_window_pattern(),
              {"sliding_window_pattern"});
    text_keys(s.partial_rotary_factor != f.partial_rotary_factor, {"partial_rotary_factor"});
    text_keys(s.moe.experts_per_token != f.moe.experts_per_token, {"num_experts_per_tok"});
    text_keys(s.moe.norm_topk_prob != f.moe.norm_topk_prob, {"norm_topk_prob"});
    text_keys(s.moe.decoder_sparse_step != f.moe.decoder_sparse_step, {"decoder_sparse_step"});
    text_keys(s.moe.mlp_only_layers != f.moe.mlp_only_layers, {"mlp_only_layers"});
    if (s.resolved_tie() != f.resolved_tie()) copy(root_, generated_, {"tie_word_embeddings"});
    if (torch_dtype_of(s) != torch_dtype_of(f)) copy(root_, generated_, {"torch_dtype"});
    if (quantization_json(s) != quantization_json(f)) {
      copy(root_, generated_, {"quantization_config"});
    }
  }

  // The special ids the spec (or a copied tokenizer) names, and the other
  // ids moved inside a vocabulary that no longer reaches them.
  void token_ids() {
    for (Json* object : {&root_, &text()}) {
      if (object->contains("bos_token_id") && (*object)["bos_token_id"] != bos_json(ids_)) {
        (*object)["bos_token_id"] = bos_json(ids_);
      }
      if (object->contains("eos_token_id") && (*object)["eos_token_id"] != ids_json(ids_.eos)) {
        (*object)["eos_token_id"] = ids_json(ids_.eos);
      }
      beyond_vocabulary(*object, "pad_token_id", 0);
    }
    beyond_vocabulary(root_, "boi_token_index", spec_.vocab - 3);
    beyond_vocabulary(root_, "eoi_token_index", spec_.vocab - 2);
    beyond_vocabulary(root_, "image_token_index", spec_.vocab - 1);
  }

  void beyond_vocabulary(Json& object, const char* key, int replacement) {
    const auto found = object.find(key);
    if (found == object.end() || !found->is_number_integer()) return;
    const std::int64_t id = found->get<std::int64_t>();
    if (id >= spec_.vocab || id < 0) *found = replacement;
  }

  const RandomModelSpec& spec_;
  const SpecialIds& ids_;
  const RandomModelSpec file_;
  Json root_;
  const Json generated_;
  const Json generated_text_;
};

}  // namespace

Json published_config(const RandomModelSpec& spec, const SpecialIds& ids) {
  return PublishedWriter(spec, ids).write();
}

}  // namespace quire::engine::modelgen::detail
