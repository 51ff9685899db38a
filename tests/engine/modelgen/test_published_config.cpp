// spec_from_published_config (make-model --config-from): every real
// config.json in tests/data/configs gives a small model whose config.json
// differs from the published one only in the shape keys, the ids beyond the
// small vocabulary and longrope's lists cut to size, with the published key
// order; the tensors agree with the shapes written; settings changed after
// reading rewrite only their own keys.

#include <QDir>
#include <QTemporaryDir>
#include <QTest>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "modelgen_test_support.h"
#include "quire/engine/io/model_tensors.h"
#include "quire/engine/modelgen/published_config.h"
#include "quire/engine/modelgen/random_model.h"
#include "test_main.h"

using namespace quire::engine;
using modelgen::RandomModelSpec;
using Json = nlohmann::ordered_json;

// Qt Test's QCOMPARE cannot take JSON values (their conversions clash with its overloads).
#define QCOMPARE_JSON(made, expected)                                             \
  QVERIFY2(Json(made) == Json(expected),                                          \
           qPrintable(QString::fromStdString(Json(made).dump() + " instead of " + \
                                             Json(expected).dump())))
namespace fs = std::filesystem;

namespace {

const fs::path kConfigs = fs::path(QUIRE_TEST_DATA_DIR) / "configs";

Json json_file(const fs::path& path) {
  std::ifstream file(path);
  return Json::parse(file);
}

// Keys whose values follow the small shapes.
const std::set<std::string> kShapeKeys = {
    "hidden_size", "num_hidden_layers",     "num_attention_heads", "num_key_value_heads",
    "head_dim",    "intermediate_size",     "vocab_size",          "num_local_experts",
    "num_experts", "moe_intermediate_size", "layer_types",         "image_size",
    "patch_size",  "mm_tokens_per_image"};
// Ids that a vocabulary of 512 no longer reaches are moved inside it.
const std::set<std::string> kIdKeys = {"bos_token_id",    "eos_token_id",    "pad_token_id",
                                       "boi_token_index", "eoi_token_index", "image_token_index"};

bool beyond_small_vocabulary(const Json& ids) {
  if (ids.is_array()) {
    return std::any_of(ids.begin(), ids.end(),
                       [](const Json& id) { return beyond_small_vocabulary(id); });
  }
  return ids.is_number_integer() && ids.get<std::int64_t>() >= modelgen::kMinVocab;
}

// Every difference between a published object and the one written, as
// "path: why"; empty when they differ only as allowed.
void compare(const Json& real, const Json& made, const std::string& path,
             std::vector<std::string>& problems) {
  std::vector<std::string> real_order;
  for (const auto& [key, value] : real.items()) {
    const std::string where = path + key;
    real_order.push_back(key);
    if (!made.contains(key)) {
      problems.push_back(where + ": left out");
      continue;
    }
    const Json& written = made.at(key);
    if (value.is_object() && written.is_object()) {
      compare(value, written, where + ".", problems);
      continue;
    }
    if (value == written) continue;
    if (kShapeKeys.contains(key)) continue;
    if (kIdKeys.contains(key) && beyond_small_vocabulary(value)) continue;
    if ((key == "long_factor" || key == "short_factor") && value.is_array() && written.is_array() &&
        written.size() <= value.size() &&
        std::equal(written.begin(), written.end(), value.begin())) {
      continue;  // cut to rotary_dim / 2
    }
    problems.push_back(where + ": " + value.dump() + " became " + written.dump());
  }
  // Keys of its own only inside Gemma 3's text_config, and only shapes that
  // the published file leaves to Gemma3TextConfig's defaults.
  std::vector<std::string> made_order;
  for (const auto& [key, value] : made.items()) {
    if (real.contains(key)) {
      made_order.push_back(key);
    } else if (path != "text_config." || !kShapeKeys.contains(key)) {
      problems.push_back(path + key + ": added");
    }
  }
  if (made_order != real_order) problems.push_back(path + ": keys reordered");
}

std::string rejection(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return {};
}

}  // namespace

class PublishedConfigTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir root_;

  fs::path write(const RandomModelSpec& spec, const std::string& name) {
    const fs::path dir = fs::path(root_.path().toStdString()) / name;
    modelgen::write_random_model(spec, dir);
    return dir;
  }

 private slots:
  void initTestCase() { QVERIFY(root_.isValid()); }

  void keepsEveryOtherKeyAsPublished_data() {
    QTest::addColumn<QString>("file");
    const QStringList files =
        QDir(QString::fromStdString(kConfigs.string())).entryList({"*.json"}, QDir::Files);
    QVERIFY(files.size() >= 13);
    for (const QString& file : files)
      QTest::newRow(qPrintable(file)) << file;
  }

  void keepsEveryOtherKeyAsPublished() {
    QFETCH(QString, file);
    const fs::path source = kConfigs / file.toStdString();
    const RandomModelSpec spec = modelgen::spec_from_published_config(source);
    const fs::path dir = write(spec, file.toStdString());
    const Json real = json_file(source);
    const Json made = json_file(dir / "config.json");
    std::vector<std::string> problems;
    compare(real, made, "", problems);
    std::string text;
    for (const std::string& problem : problems)
      text += "\n  " + problem;
    QVERIFY2(problems.empty(), text.c_str());

    // The shapes written are the tensors' shapes.
    const io::ModelTensors tensors = io::ModelTensors::open(dir);
    std::set<std::string> names;
    for (const std::string_view name : tensors.names())
      names.insert(std::string(name));
    std::set<std::string> expected;
    for (const auto& [name, tensor] : quire::test::expected_tensors(spec))
      expected.insert(name);
    QCOMPARE(names, expected);
    const Json& text_config = spec.multimodal ? made.at("text_config") : made;
    QCOMPARE(text_config.at("hidden_size").get<int>(), spec.hidden);
    QCOMPARE(text_config.at("num_hidden_layers").get<int>(), spec.layers);
    QCOMPARE(text_config.at("vocab_size").get<int>(), spec.vocab);
    // The first projection's rows: heads x head_dim (Phi-3's fused one adds k and v).
    if (spec.format.kind != modelgen::WeightFormat::EXL2) {
      const std::string prefix = spec.multimodal ? spec.text_prefix : "model.";
      const bool phi3 = spec.architecture == "phi3";
      const std::int64_t head_dim = text_config.contains("head_dim")
                                        ? text_config.at("head_dim").get<std::int64_t>()
                                        : spec.hidden / spec.heads;
      const std::int64_t rows = (spec.heads + (phi3 ? 2 * spec.kv_heads : 0)) * head_dim;
      const std::string key = prefix + "layers.0.self_attn." + (phi3 ? "qkv_proj" : "q_proj");
      QVERIFY2(tensors.contains(key + ".weight"), key.c_str());
      QCOMPARE(tensors.get(key + ".weight").info->shape.front(), rows);
    }
  }

  // Heads in the published grouping, head_dim written where the file writes
  // it, the MLP in its ratio, experts enough for their top-k.
  void scalesInThePublishedProportions() {
    for (const char* name :
         {"gemma-2-9b-it", "mistral-nemo-instruct-2407", "qwen3-30b-a3b", "phi-3.5-mini-instruct",
          "phi-4-mini-instruct", "llama-3.1-8b-instruct"}) {
      const Json real = json_file(kConfigs / (std::string(name) + ".json"));
      const RandomModelSpec spec =
          modelgen::spec_from_published_config(kConfigs / (std::string(name) + ".json"));
      const int real_heads = real.at("num_attention_heads").get<int>();
      const int real_kv = real.at("num_key_value_heads").get<int>();
      QCOMPARE(spec.heads / spec.kv_heads, real_heads / real_kv);
      QVERIFY2(spec.kv_heads <= 4, name);
      const double real_ratio =
          real.at("intermediate_size").get<double>() / real.at("hidden_size").get<double>();
      QVERIFY2(std::abs(double(spec.intermediate) / spec.hidden / real_ratio - 1.0) < 0.1, name);
      QCOMPARE(spec.head_dim != 0, real.contains("head_dim"));
      QVERIFY(spec.hidden % 32 == 0 && spec.intermediate % 32 == 0);
      modelgen::validate(spec);
    }
    const RandomModelSpec qwen =
        modelgen::spec_from_published_config(kConfigs / "qwen3-30b-a3b.json");
    QCOMPARE(qwen.moe.experts_per_token, 8);
    QCOMPARE(qwen.moe.experts, 16);
    QVERIFY(qwen.moe.norm_topk_prob);
    QCOMPARE(qwen.bos_id, std::optional<int>(1));  // 151643 is beyond any trained tokenizer
    const RandomModelSpec gemma =
        modelgen::spec_from_published_config(kConfigs / "gemma-3-4b-it.json");
    QVERIFY(gemma.multimodal);
    QCOMPARE(gemma.layers, 6);  // a whole sliding pattern
    QCOMPARE(int(gemma.rope_scaling.type), int(modelgen::RopeScalingSpec::Type::Linear));
    QCOMPARE(gemma.eos_ids, (std::vector<int>{1, 106}));
    const RandomModelSpec phi =
        modelgen::spec_from_published_config(kConfigs / "phi-3.5-mini-instruct.json");
    QCOMPARE(int(phi.rope_scaling.type), int(modelgen::RopeScalingSpec::Type::LongRope));
    QCOMPARE(phi.rope_scaling.original_max_position_embeddings, std::int64_t{4096});
    QVERIFY(!phi.resolved_tie());
    // Phi-4-mini: 24 / 8 heads of 128 become 3 / 1 of 64 (hidden 192, so that
    // hidden / heads gives them), three quarters of each rotating.
    const RandomModelSpec phi4 =
        modelgen::spec_from_published_config(kConfigs / "phi-4-mini-instruct.json");
    QCOMPARE(phi4.heads, 3);
    QCOMPARE(phi4.kv_heads, 1);
    QCOMPARE(phi4.head_dim, 0);
    QCOMPARE(phi4.hidden, 192);
    QCOMPARE(phi4.resolved_head_dim(), 64);
    QCOMPARE(phi4.partial_rotary_factor, 0.75);
    QCOMPARE(phi4.rotary_dim(), 48);
    QCOMPARE(int(phi4.rope_scaling.type), int(modelgen::RopeScalingSpec::Type::LongRope));
    QCOMPARE(phi4.rope_scaling.original_max_position_embeddings, std::int64_t{4096});
    QCOMPARE(phi4.max_position_embeddings, std::int64_t{131072});
    QCOMPARE(phi4.sliding_window, std::optional<int>(262144));
    QVERIFY(phi4.resolved_tie());
    QCOMPARE(phi4.eos_ids, (std::vector<int>{2}));  // 199999 is beyond any trained tokenizer
    const RandomModelSpec exl2 =
        modelgen::spec_from_published_config(kConfigs / "llama-3.1-8b-instruct-exl2.json");
    QCOMPARE(int(exl2.format.kind), int(modelgen::WeightFormat::EXL2));
    QCOMPARE(exl2.format.exl2_bits, 4.0);
  }

  // Phi-4-mini's small model: the first 24 of its 48 factors for the 48
  // rotating dimensions of heads of 64, its remote-code keys as written, and
  // no lm_head in FP16 or EXL2, whose config.json gains only the quantization.
  void phi4MiniKeepsItsLayoutInEveryFormat() {
    const fs::path source = kConfigs / "phi-4-mini-instruct.json";
    const Json real = json_file(source);
    RandomModelSpec spec = modelgen::spec_from_published_config(source);
    for (const char* format : {"fp16", "exl2:4.0"}) {
      spec.format = modelgen::parse_format(format);
      const fs::path dir = write(spec, std::string("phi-4-mini-") + format);
      const Json made = json_file(dir / "config.json");
      const Json& long_factor = made.at("rope_scaling").at("long_factor");
      QCOMPARE(long_factor.size(), std::size_t(24));
      QVERIFY(std::equal(long_factor.begin(), long_factor.end(),
                         real.at("rope_scaling").at("long_factor").begin()));
      QCOMPARE_JSON(made.at("rope_scaling").at("short_factor"), Json(std::vector<double>(24, 1.0)));
      QCOMPARE_JSON(made.at("rope_scaling").at("type"), Json("longrope"));
      QCOMPARE_JSON(made.at("partial_rotary_factor"), Json(0.75));
      QCOMPARE_JSON(made.at("original_max_position_embeddings"), Json(4096));
      QCOMPARE_JSON(made.at("sliding_window"), Json(262144));
      QCOMPARE_JSON(made.at("tie_word_embeddings"), Json(true));
      for (const char* key : {"full_attn_mod", "interpolate_factor", "lm_head_bias", "auto_map"})
        QCOMPARE_JSON(made.at(key), real.at(key));
      QCOMPARE(made.contains("quantization_config"), std::string(format) != "fp16");

      const io::ModelTensors tensors = io::ModelTensors::open(dir);
      QVERIFY(tensors.contains("model.embed_tokens.weight"));
      for (const char* suffix : {".weight", ".q_weight", ".qweight"})
        QVERIFY2(!tensors.contains(std::string("lm_head") + suffix), format);
    }
  }

  // A setting changed after reading rewrites its own keys and no others.
  void changedSettingsRewriteOnlyTheirKeys() {
    const fs::path source = kConfigs / "mixtral-8x7b-instruct-v0.1.json";
    RandomModelSpec spec = modelgen::spec_from_published_config(source);
    const Json unchanged = json_file(write(spec, "mixtral-as-read") / "config.json");
    spec.moe.experts_per_token = 1;
    spec.rope_theta = 500000.0;
    spec.sliding_window = 64;
    const Json changed = json_file(write(spec, "mixtral-changed") / "config.json");
    std::set<std::string> differing;
    for (const auto& [key, value] : unchanged.items()) {
      if (changed.at(key) != value) differing.insert(key);
    }
    QCOMPARE(differing,
             (std::set<std::string>{"num_experts_per_tok", "rope_theta", "sliding_window"}));
    QCOMPARE(changed.at("sliding_window").get<int>(), 64);

    // Gemma 3's text_config gains a key it left to its default.
    RandomModelSpec gemma = modelgen::spec_from_published_config(kConfigs / "gemma-3-4b-it.json");
    gemma.rope_theta = 20000.0;
    gemma.format = modelgen::parse_format("gptq");
    const Json made = json_file(write(gemma, "gemma-changed") / "config.json");
    QCOMPARE(made.at("text_config").at("rope_theta").get<double>(), 20000.0);
    QVERIFY(!made.contains("rope_theta"));
    QCOMPARE_JSON(made.at("quantization_config").at("quant_method"), Json("gptq"));
    QCOMPARE_JSON(made.at("torch_dtype"), Json("bfloat16"));  // as published
  }

  void publishedQuantizationIsKeptAsWritten() {
    const fs::path source = kConfigs / "llama-3.1-8b-instruct-exl2.json";
    const Json made =
        json_file(write(modelgen::spec_from_published_config(source), "exl2") / "config.json");
    QCOMPARE_JSON(made.at("quantization_config"), json_file(source).at("quantization_config"));
  }

  void rejectsFilesItCannotWrite() {
    const auto message = [](const std::string& text) {
      return rejection([&] { modelgen::spec_from_published_config_text(text, "config.json"); });
    };
    QVERIFY(message("{").starts_with("config_from: config.json is not JSON"));
    QVERIFY(message("[1]").starts_with("config_from: "));
    QVERIFY(message("{\"model_type\": \"llama\"}").starts_with("config_from: "));
    const std::string gpt2 = message("{\"architectures\": [\"GPT2LMHeadModel\"]}");
    QVERIFY2(gpt2.find("GPT2LMHeadModel") != std::string::npos &&
                 gpt2.find("Gemma3ForConditionalGeneration") != std::string::npos,
             gpt2.c_str());
    QVERIFY(message("{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": \"big\"}")
                .find("\"hidden_size\" is not a number") != std::string::npos);
    QVERIFY(message("{\"architectures\": [\"LlamaForCausalLM\"], \"rope_scaling\": "
                    "{\"rope_type\": \"ntk\"}}")
                .starts_with("config_from: "));
    QVERIFY(rejection([] {
              modelgen::spec_from_published_config("/nonexistent/config.json");
            }).starts_with("config_from: cannot read"));
  }
};

QUIRE_TEST(PublishedConfigTest)
#include "test_published_config.moc"
