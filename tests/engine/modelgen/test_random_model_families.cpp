// Gemma 2, Gemma 3 (text and with vision), Phi-3, Mixtral and Qwen3-MoE in
// every weight format, read back through the engine's safetensors reader:
// tensor names, dtypes and shapes (fused projections, experts, routers,
// vision tower), EXL2/GPTQ layouts of the fused and expert projections,
// config.json's keys against the published files, value distributions, and
// validation messages.

#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "modelgen_test_support.h"
#include "quire/engine/formats/exl2_layout.h"
#include "quire/engine/formats/gptq_layout.h"
#include "quire/engine/io/model_tensors.h"
#include "quire/engine/model_error.h"
#include "quire/engine/modelgen/random_model.h"
#include "test_main.h"

using namespace quire::engine;
using modelgen::RandomModelSpec;
using modelgen::WeightFormat;
using quire::test::ModelVariant;
using Json = nlohmann::ordered_json;

// Qt Test's QCOMPARE cannot take JSON values (their conversions clash with its overloads).
#define QCOMPARE_JSON(made, expected)                                             \
  QVERIFY2(Json(made) == Json(expected),                                          \
           qPrintable(QString::fromStdString(Json(made).dump() + " instead of " + \
                                             Json(expected).dump())))
namespace fs = std::filesystem;

namespace {

Json json_file(const fs::path& path) {
  std::ifstream file(path);
  return Json::parse(file);
}

Json published(const char* name) {
  return json_file(fs::path(QUIRE_TEST_DATA_DIR) / "configs" / (std::string(name) + ".json"));
}

std::set<std::string> keys_of(const Json& object) {
  std::set<std::string> keys;
  for (const auto& [key, value] : object.items())
    keys.insert(key);
  return keys;
}

// Keys `made` writes that `real` lacks.
std::set<std::string> invented(const Json& made, const Json& real) {
  std::set<std::string> extra;
  for (const std::string& key : keys_of(made)) {
    if (!real.contains(key)) extra.insert(key);
  }
  return extra;
}

std::string rejection(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return {};
}

formats::TensorView view(const io::ModelTensors& tensors, const std::string& name) {
  const io::ModelTensors::Located located = tensors.get(name);
  return {located.info->dtype, located.info->shape, tensors.data(name)};
}

std::optional<formats::TensorView> optional_view(const io::ModelTensors& tensors,
                                                 const std::string& name) {
  if (!tensors.contains(name)) return std::nullopt;
  return view(tensors, name);
}

std::vector<ModelVariant> family_variants() {
  std::vector<ModelVariant> variants;
  variants.reserve(32);  // add() hands out pointers into it
  const auto add = [&](const std::string& label, const char* arch, const char* format) {
    RandomModelSpec spec = modelgen::default_spec(arch);
    spec.format = modelgen::parse_format(format);
    spec.seed = 5;
    variants.push_back({label, spec});
    return &variants.back().spec;
  };
  add("gemma2 fp16", "gemma2", "fp16");
  add("gemma2 exl2:4.0", "gemma2", "exl2:4.0");
  add("gemma2 gptq", "gemma2", "gptq")->tie_embeddings = false;
  RandomModelSpec* gemma3 = add("gemma3 bf16", "gemma3", "bf16");
  gemma3->layers = 6;
  gemma3->rope_scaling = modelgen::parse_rope_scaling("linear:8");
  gemma3->write_layer_types = true;
  add("gemma3 exl2:3.0", "gemma3", "exl2:3.0")->head_dim = 64;
  add("gemma3 vision", "gemma3", "fp16")->multimodal = true;
  RandomModelSpec* newer = add("gemma3 vision newer prefix", "gemma3", "bf16");
  newer->multimodal = true;
  newer->text_prefix = "model.language_model.";
  newer->tie_embeddings = false;
  RandomModelSpec* vision_gptq = add("gemma3 vision gptq", "gemma3", "gptq");
  vision_gptq->multimodal = true;
  vision_gptq->tie_embeddings = false;
  RandomModelSpec* phi3 = add("phi3 fp16 longrope", "phi3", "fp16");
  phi3->rope_scaling = modelgen::parse_rope_scaling("longrope");
  phi3->partial_rotary_factor = 0.5;
  add("phi3 exl2:4.0", "phi3", "exl2:4.0");
  add("phi3 gptq", "phi3", "gptq")->kv_heads = 4;
  add("phi3 sharded", "phi3", "bf16")->shards = 3;
  add("mixtral fp16", "mixtral", "fp16");
  add("mixtral exl2:4.0", "mixtral", "exl2:4.0");
  RandomModelSpec* mixtral = add("mixtral gptq", "mixtral", "gptq");
  mixtral->moe.experts = 3;
  mixtral->moe.experts_per_token = 1;
  RandomModelSpec* qwen = add("qwen3_moe bf16", "qwen3_moe", "bf16");
  qwen->layers = 3;
  qwen->moe.mlp_only_layers = {1};
  add("qwen3_moe exl2:4.0", "qwen3_moe", "exl2:4.0")->moe.expert_intermediate = 96;
  RandomModelSpec* qwen_gptq = add("qwen3_moe gptq", "qwen3_moe", "gptq");
  qwen_gptq->layers = 4;
  qwen_gptq->moe.decoder_sparse_step = 2;
  qwen_gptq->moe.expert_intermediate = 64;
  return variants;
}

struct BadSpec {
  const char* label;
  const char* option;
  std::function<void(RandomModelSpec&)> change;
};

RandomModelSpec family(const char* arch) {
  return modelgen::default_spec(arch);
}

}  // namespace

class RandomModelFamiliesTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir root_;
  std::vector<ModelVariant> variants_ = family_variants();

  fs::path dir_of(int index) const {
    return fs::path(root_.path().toStdString()) / ("model" + std::to_string(index));
  }

  int index_of(const std::string& name) const {
    for (std::size_t i = 0; i < variants_.size(); ++i) {
      if (variants_[i].name == name) return int(i);
    }
    return -1;
  }

  Json config_of(const std::string& name) const {
    return json_file(dir_of(index_of(name)) / "config.json");
  }

  void add_rows() {
    QTest::addColumn<int>("index");
    for (std::size_t i = 0; i < variants_.size(); ++i)
      QTest::newRow(variants_[i].name.c_str()) << int(i);
  }

 private slots:
  void initTestCase() {
    QVERIFY(root_.isValid());
    for (std::size_t i = 0; i < variants_.size(); ++i)
      modelgen::write_random_model(variants_[i].spec, dir_of(int(i)));
  }

  void tensorsHaveTheExpectedDtypesAndShapes_data() { add_rows(); }
  void tensorsHaveTheExpectedDtypesAndShapes() {
    QFETCH(int, index);
    const RandomModelSpec& spec = variants_[std::size_t(index)].spec;
    const io::ModelTensors tensors = io::ModelTensors::open(dir_of(index));
    QCOMPARE(int(tensors.files().size()), spec.shards);
    const auto expected = quire::test::expected_tensors(spec);
    std::set<std::string> names;
    for (const std::string_view name : tensors.names())
      names.insert(std::string(name));
    std::set<std::string> expected_names;
    for (const auto& [name, tensor] : expected)
      expected_names.insert(name);
    QCOMPARE(names, expected_names);
    for (const auto& [name, tensor] : expected) {
      std::vector<std::int64_t> shape = tensor.shape;
      std::replace(shape.begin(), shape.end(), quire::test::kAny, io::ModelTensors::kAnyDim);
      try {
        tensors.require(name, {tensor.dtype}, shape);
      } catch (const ModelError& error) {
        QFAIL(error.what());
      }
    }
  }

  // Fused projections and experts quantize as whole layers of their own.
  void quantizedLayersDescribeCleanly_data() { add_rows(); }
  void quantizedLayersDescribeCleanly() {
    QFETCH(int, index);
    const RandomModelSpec& spec = variants_[std::size_t(index)].spec;
    if (spec.format.kind != WeightFormat::EXL2 && spec.format.kind != WeightFormat::GPTQ) {
      QSKIP("dense weights");
    }
    const io::ModelTensors tensors = io::ModelTensors::open(dir_of(index));
    for (const quire::test::ExpectedLinear& linear : quire::test::expected_linears(spec)) {
      const std::string& key = linear.key;
      const formats::LinearShape shape{linear.in, linear.out};
      if (spec.format.kind == WeightFormat::GPTQ) {
        if (linear.head) continue;  // FP16
        const formats::GptqTensors parts{
            view(tensors, key + ".qweight"), view(tensors, key + ".qzeros"),
            view(tensors, key + ".scales"), optional_view(tensors, key + ".g_idx"),
            optional_view(tensors, key + ".bias")};
        const formats::GptqLayout layout = describe_gptq(key, parts, {4, spec.gptq_v2}, shape);
        QCOMPARE(layout.group_size, spec.gptq_group_size);
        continue;
      }
      const formats::Exl2Tensors parts{
          view(tensors, key + ".q_weight"), view(tensors, key + ".q_invperm"),
          view(tensors, key + ".q_scale"),  view(tensors, key + ".q_scale_max"),
          view(tensors, key + ".q_groups"), optional_view(tensors, key + ".bias")};
      const formats::Exl2Layout layout = describe_exl2(key, parts, shape);
      if (!linear.head) {
        QVERIFY2(std::abs(layout.bits_per_weight() - spec.format.exl2_bits) < 0.5, key.c_str());
      }
    }
  }

  void gemma2WritesThePublishedKeys() {
    const Json made = config_of("gemma2 fp16");
    const Json real = published("gemma-2-9b-it");
    QCOMPARE(invented(made, real), std::set<std::string>{});
    for (const char* key :
         {"hidden_act", "hidden_activation", "cache_implementation", "attn_logit_softcapping",
          "final_logit_softcapping", "sliding_window", "sliding_window_size", "rms_norm_eps",
          "model_type", "architectures", "pad_token_id"}) {
      QVERIFY2(made.at(key) == real.at(key), key);
    }
    QCOMPARE(made.at("head_dim").get<int>(), 32);
    QCOMPARE(made.at("query_pre_attn_scalar").get<int>(), 32);  // head_dim unless given
    // Tied, as Gemma's default: the key is left out, as published.
    QVERIFY(!made.contains("tie_word_embeddings"));
    QVERIFY(!made.contains("layer_types"));
    // The untied EXL2 model says so.
    QCOMPARE_JSON(config_of("gemma2 exl2:4.0").at("tie_word_embeddings"), Json(false));
  }

  void gemma3TextWritesItsKeys() {
    const Json made = config_of("gemma3 bf16");
    QCOMPARE_JSON(made.at("architectures"), Json::array({"Gemma3ForCausalLM"}));
    QCOMPARE_JSON(made.at("model_type"), Json("gemma3_text"));
    QVERIFY(made.at("attn_logit_softcapping").is_null());
    QVERIFY(made.at("final_logit_softcapping").is_null());
    QCOMPARE(made.at("rope_theta").get<double>(), 1e6);
    QCOMPARE(made.at("rope_local_base_freq").get<double>(), 10000.0);
    QCOMPARE(made.at("sliding_window").get<int>(), 512);
    QCOMPARE(made.at("sliding_window_pattern").get<int>(), 6);
    QCOMPARE_JSON(made.at("rope_scaling"), (Json{{"factor", 8.0}, {"rope_type", "linear"}}));
    QCOMPARE_JSON(made.at("layer_types"),
                  (Json{"sliding_attention", "sliding_attention", "sliding_attention",
                        "sliding_attention", "sliding_attention", "full_attention"}));
    QVERIFY(!made.contains("hidden_act"));  // gemma-3-1b-it names only hidden_activation
  }

  void gemma3WithVisionWritesThePublishedLayout() {
    const Json real = published("gemma-3-4b-it");
    for (const char* name : {"gemma3 vision", "gemma3 vision newer prefix"}) {
      const Json made = config_of(name);
      std::set<std::string> top = keys_of(real);
      top.erase("transformers_version");
      std::set<std::string> made_top = keys_of(made);
      made_top.erase("tie_word_embeddings");
      QCOMPARE(made_top, top);
      QCOMPARE(keys_of(made.at("vision_config")), keys_of(real.at("vision_config")));
      // text_config: the published keys, and the shapes that differ from
      // Gemma3TextConfig's defaults; nothing else.
      std::set<std::string> allowed = keys_of(real.at("text_config"));
      for (const char* key : {"head_dim", "num_attention_heads", "num_key_value_heads",
                              "vocab_size", "query_pre_attn_scalar", "max_position_embeddings"})
        allowed.insert(key);
      for (const std::string& key : keys_of(made.at("text_config")))
        QVERIFY2(allowed.contains(key), key.c_str());
      QCOMPARE_JSON(made.at("text_config").at("model_type"), Json("gemma3_text"));
      const int vocab = made.at("text_config").at("vocab_size").get<int>();
      QCOMPARE(made.at("image_token_index").get<int>(), vocab - 1);
    }
    QCOMPARE_JSON(config_of("gemma3 vision newer prefix").at("tie_word_embeddings"), Json(false));
  }

  // The text weights under either prefix are those of the text-only model of
  // the same seed and shapes; a text-only reader finds them all.
  void visionModelsHoldTheTextOnlyWeights() {
    RandomModelSpec text = family("gemma3");
    text.seed = 5;
    const fs::path text_dir = fs::path(root_.path().toStdString()) / "text-only";
    modelgen::write_random_model(text, text_dir);
    const io::ModelTensors plain = io::ModelTensors::open(text_dir);
    const io::ModelTensors published_layout =
        io::ModelTensors::open(dir_of(index_of("gemma3 vision")));
    const io::ModelTensors newer_layout =
        io::ModelTensors::open(dir_of(index_of("gemma3 vision newer prefix")));
    int compared = 0;
    for (const std::string_view view_name : plain.names()) {
      const std::string name(view_name);
      const std::string rest = name.substr(std::string("model.").size());
      const auto bytes = [](const io::ModelTensors& t, const std::string& n) {
        const std::span<const std::byte> data = t.data(n);
        return std::vector<std::byte>(data.begin(), data.end());
      };
      QVERIFY2(published_layout.contains("language_model.model." + rest), name.c_str());
      QVERIFY(bytes(plain, name) == bytes(published_layout, "language_model.model." + rest));
      QVERIFY(newer_layout.contains("model.language_model." + rest));
      ++compared;
    }
    QVERIFY(compared > 20);
    QVERIFY(newer_layout.contains("lm_head.weight"));
    QVERIFY(!published_layout.contains("lm_head.weight"));
  }

  void phi3WritesLongrope() {
    const Json made = config_of("phi3 fp16 longrope");
    const Json real = published("phi-3.5-mini-instruct");
    std::set<std::string> extra = invented(made, real);
    QCOMPARE(extra, std::set<std::string>{"partial_rotary_factor"});
    // Phi-4-mini writes it, and every other key the small model has.
    QCOMPARE(invented(made, published("phi-4-mini-instruct")), std::set<std::string>{});
    QCOMPARE(made.at("partial_rotary_factor").get<double>(), 0.5);
    QCOMPARE(made.at("original_max_position_embeddings").get<int>(), 16);
    QCOMPARE(made.at("sliding_window").get<int>(), 262144);
    const Json& scaling = made.at("rope_scaling");
    QCOMPARE(keys_of(scaling), keys_of(real.at("rope_scaling")));
    QCOMPARE_JSON(scaling.at("type"), Json("longrope"));
    // rotary_dim / 2 factors: head_dim 32 at a factor of 0.5 rotates 16.
    const auto shorts = scaling.at("short_factor").get<std::vector<double>>();
    const auto longs = scaling.at("long_factor").get<std::vector<double>>();
    QCOMPARE(int(shorts.size()), 8);
    QCOMPARE(int(longs.size()), 8);
    QVERIFY(std::is_sorted(shorts.begin(), shorts.end()));
    QVERIFY(std::is_sorted(longs.begin(), longs.end()));
    QVERIFY(shorts.front() >= 1.0 && shorts.back() <= 1.5);
    QVERIFY(longs.front() >= 1.0 && longs.back() <= 40.0 && longs.back() > shorts.back());
    // Drawn from the seed: the same spec gives the same lists, another seed others.
    RandomModelSpec spec = variants_[std::size_t(index_of("phi3 fp16 longrope"))].spec;
    const fs::path again = fs::path(root_.path().toStdString()) / "phi3-again";
    modelgen::write_random_model(spec, again);
    QCOMPARE_JSON(json_file(again / "config.json").at("rope_scaling"), scaling);
    spec.seed = 6;
    const fs::path other = fs::path(root_.path().toStdString()) / "phi3-other";
    modelgen::write_random_model(spec, other);
    QVERIFY(json_file(other / "config.json").at("rope_scaling") != scaling);
  }

  void mixturesWriteTheirExperts() {
    const Json mixtral = config_of("mixtral fp16");
    QCOMPARE(invented(mixtral, published("mixtral-8x7b-instruct-v0.1")), std::set<std::string>{});
    QCOMPARE(mixtral.at("num_local_experts").get<int>(), 4);
    QCOMPARE(mixtral.at("num_experts_per_tok").get<int>(), 2);
    QCOMPARE_JSON(mixtral.at("output_router_logits"), Json(false));
    QVERIFY(mixtral.at("sliding_window").is_null());
    QCOMPARE(config_of("mixtral gptq").at("num_experts_per_tok").get<int>(), 1);

    const Json qwen = config_of("qwen3_moe bf16");
    QCOMPARE(invented(qwen, published("qwen3-30b-a3b")), std::set<std::string>{});
    QCOMPARE(qwen.at("num_experts").get<int>(), 4);
    QCOMPARE_JSON(qwen.at("moe_intermediate_size").get<int>(), 128);  // intermediate / 2
    QCOMPARE_JSON(qwen.at("mlp_only_layers"), Json::array({1}));
    QCOMPARE_JSON(qwen.at("norm_topk_prob"), Json(true));
    QCOMPARE(qwen.at("decoder_sparse_step").get<int>(), 1);
    QCOMPARE(config_of("qwen3_moe gptq").at("decoder_sparse_step").get<int>(), 2);
  }

  // Gemma's norms scale by (1 + w) and its embeddings by sqrt(hidden).
  void gemmaValuesKeepActivationsOfOrderOne() {
    const RandomModelSpec& spec = variants_[std::size_t(index_of("gemma2 fp16"))].spec;
    const io::ModelTensors tensors = io::ModelTensors::open(dir_of(index_of("gemma2 fp16")));
    std::vector<double> norms;
    for (const char* name :
         {"model.layers.0.input_layernorm.weight",
          "model.layers.0.pre_feedforward_layernorm.weight",
          "model.layers.1.post_feedforward_layernorm.weight", "model.norm.weight"}) {
      const std::vector<double> values = quire::test::float_values(tensors, name);
      norms.insert(norms.end(), values.begin(), values.end());
    }
    const quire::test::Moments norm = quire::test::moments(norms);
    QVERIFY2(std::abs(norm.mean) < 0.03 && std::abs(norm.deviation - 0.1) < 0.02,
             qPrintable(QString("%1 %2").arg(norm.mean).arg(norm.deviation)));
    const quire::test::Moments embedding =
        quire::test::moments(quire::test::float_values(tensors, "model.embed_tokens.weight"));
    QVERIFY(std::abs(embedding.deviation * std::sqrt(double(spec.hidden)) - 1.0) < 0.05);
    // Qwen3-MoE's norms lie around 1, as Qwen3's.
    const io::ModelTensors qwen = io::ModelTensors::open(dir_of(index_of("qwen3_moe bf16")));
    const quire::test::Moments q_norm = quire::test::moments(
        quire::test::float_values(qwen, "model.layers.0.self_attn.q_norm.weight"));
    QVERIFY(std::abs(q_norm.mean - 1.0) < 0.1);
  }

  void defaultSpecsAreThePublishedFamilies() {
    QCOMPARE(family("llama").rope_theta, RandomModelSpec{}.rope_theta);
    QCOMPARE(family("gemma2").softcap.attention, 50.0);
    QCOMPARE(family("gemma2").softcap.final, 30.0);
    QCOMPARE(family("gemma2").sliding_window, std::optional<int>(4096));
    QCOMPARE(family("gemma3").resolved_sliding_window_pattern(), 6);
    QCOMPARE(family("gemma3").rope_theta, 1e6);
    QCOMPARE(family("mixtral").rope_theta, 1e6);
    QVERIFY(rejection([] { modelgen::default_spec("gpt2"); }).starts_with("arch: "));
    for (const std::string_view name : modelgen::architecture_names()) {
      modelgen::validate(modelgen::default_spec(name));
    }
  }

  void rejectsInvalidFamilySettingsNamingTheOption() {
    const std::vector<BadSpec> bad = {
        {"softcap on llama", "softcap", [](RandomModelSpec& s) { s.softcap.final = 30.0; }},
        {"negative softcap", "softcap",
         [](RandomModelSpec& s) {
           s = family("gemma2");
           s.softcap.attention = -1.0;
         }},
        {"gemma without a window", "sliding_window",
         [](RandomModelSpec& s) {
           s = family("gemma3");
           s.sliding_window.reset();
         }},
        {"gemma2 pattern", "sliding_window_pattern",
         [](RandomModelSpec& s) {
           s = family("gemma2");
           s.sliding_window_pattern = 3;
         }},
        {"gemma2 rope scaling", "rope_scaling",
         [](RandomModelSpec& s) {
           s = family("gemma2");
           s.rope_scaling = modelgen::parse_rope_scaling("linear:2");
         }},
        {"gemma3 yarn", "rope_scaling",
         [](RandomModelSpec& s) {
           s = family("gemma3");
           s.rope_scaling = modelgen::parse_rope_scaling("yarn:2");
         }},
        {"layer types on llama", "layer_types",
         [](RandomModelSpec& s) { s.write_layer_types = true; }},
        {"vision on gemma2", "multimodal",
         [](RandomModelSpec& s) {
           s = family("gemma2");
           s.multimodal = true;
         }},
        {"unknown text prefix", "text_prefix",
         [](RandomModelSpec& s) {
           s = family("gemma3");
           s.multimodal = true;
           s.text_prefix = "text.";
         }},
        {"tokens per image not square", "tokens_per_image",
         [](RandomModelSpec& s) {
           s = family("gemma3");
           s.multimodal = true;
           s.vision.tokens_per_image = 3;
         }},
        {"qwen2_5_vl without its tower", "multimodal",
         [](RandomModelSpec& s) {
           s = family("qwen2_5_vl");
           s.multimodal = false;
         }},
        {"qwen2_5_vl with gemma's prefix", "text_prefix",
         [](RandomModelSpec& s) {
           s = family("qwen2_5_vl");
           s.text_prefix = "language_model.model.";
         }},
        {"qwen2_5_vl heads of 2", "vision_heads",
         [](RandomModelSpec& s) {
           s = family("qwen2_5_vl");
           s.vision.heads = 32;
         }},
        {"qwen2_5_vl full attention beyond the blocks", "fullatt_blocks",
         [](RandomModelSpec& s) {
           s = family("qwen2_5_vl");
           s.vision.fullatt_blocks = {2};
         }},
        {"qwen2_5_vl window below a token", "window_size",
         [](RandomModelSpec& s) {
           s = family("qwen2_5_vl");
           s.vision.window_size = 27;
         }},
        {"longrope on llama", "rope_scaling",
         [](RandomModelSpec& s) { s.rope_scaling = modelgen::parse_rope_scaling("longrope"); }},
        {"longrope past the context", "max_position_embeddings",
         [](RandomModelSpec& s) {
           s = family("phi3");
           s.rope_scaling = modelgen::parse_rope_scaling("longrope:4096");
         }},
        {"phi3 head_dim", "head_dim",
         [](RandomModelSpec& s) {
           s = family("phi3");
           s.head_dim = 64;
         }},
        {"odd rotary share", "partial_rotary_factor",
         [](RandomModelSpec& s) {
           s = family("phi3");
           s.partial_rotary_factor = 0.3;
         }},
        {"partial rotary on llama", "partial_rotary_factor",
         [](RandomModelSpec& s) { s.partial_rotary_factor = 0.5; }},
        {"experts on llama", "experts", [](RandomModelSpec& s) { s.moe.experts = 8; }},
        {"top-k above the experts", "experts_per_token",
         [](RandomModelSpec& s) {
           s = family("mixtral");
           s.moe.experts_per_token = 5;
         }},
        {"expert width on mixtral", "expert_intermediate",
         [](RandomModelSpec& s) {
           s = family("mixtral");
           s.moe.expert_intermediate = 64;
         }},
        {"unnormalised mixtral", "norm_topk_prob",
         [](RandomModelSpec& s) {
           s = family("mixtral");
           s.moe.norm_topk_prob = false;
         }},
        {"dense layer past the model", "mlp_only_layers",
         [](RandomModelSpec& s) {
           s = family("qwen3_moe");
           s.moe.mlp_only_layers = {2};
         }},
        {"dense layer twice", "mlp_only_layers",
         [](RandomModelSpec& s) {
           s = family("qwen3_moe");
           s.moe.mlp_only_layers = {1, 1};
         }},
        {"GPTQ expert width 48", "expert_intermediate",
         [](RandomModelSpec& s) {
           s = family("qwen3_moe");
           s.format = modelgen::parse_format("gptq");
           s.moe.expert_intermediate = 48;
         }},
    };
    for (const BadSpec& b : bad) {
      RandomModelSpec spec;
      b.change(spec);
      const std::string message = rejection([&] { modelgen::validate(spec); });
      QVERIFY2(message.starts_with(std::string(b.option) + ": "),
               qPrintable(QString("%1: \"%2\"").arg(b.label, QString::fromStdString(message))));
    }
  }
};

QUIRE_TEST(RandomModelFamiliesTest)
#include "test_random_model_families.moc"
