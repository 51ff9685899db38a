// Qwen's vision-language downloads read as their text models: the keys at
// the top level with rope_scaling type "mrope" (as Qwen2-VL and Qwen2.5-VL
// were first published), or under text_config with mrope_section beside
// rope_type "default" (as newer transformers save them), and Qwen3-VL's
// interleaved sections.

#include <QTest>
#include <string>

#include "quire/engine/model/architecture.h"
#include "quire/engine/model/model_config.h"
#include "quire/engine/model_error.h"
#include "test_main.h"

using namespace quire::engine;

namespace {

// The shape of Qwen2.5-VL-7B-Instruct's config.json, its vision_config cut short.
const char* kQwen25VlOriginal = R"({
  "architectures": ["Qwen2_5_VLForConditionalGeneration"], "model_type": "qwen2_5_vl",
  "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28,
  "num_attention_heads": 28, "num_key_value_heads": 4, "vocab_size": 152064,
  "max_position_embeddings": 128000, "max_window_layers": 28, "rms_norm_eps": 1e-06,
  "rope_theta": 1000000.0, "sliding_window": 32768, "use_sliding_window": false,
  "tie_word_embeddings": false, "torch_dtype": "bfloat16", "hidden_act": "silu",
  "image_token_id": 151655, "vision_start_token_id": 151652,
  "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]},
  "vision_config": {"depth": 32, "hidden_size": 1280, "spatial_merge_size": 2}
})";

// As newer transformers write it: the language model's keys in text_config.
const char* kQwen25VlNested = R"({
  "architectures": ["Qwen2_5_VLForConditionalGeneration"], "model_type": "qwen2_5_vl",
  "image_token_id": 151655, "tie_word_embeddings": true,
  "text_config": {"model_type": "qwen2_5_vl_text", "hidden_size": 2048,
    "intermediate_size": 11008, "num_hidden_layers": 36, "num_attention_heads": 16,
    "num_key_value_heads": 2, "vocab_size": 151936, "max_position_embeddings": 128000,
    "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "hidden_act": "silu",
    "rope_scaling": {"mrope_section": [16, 24, 24], "rope_type": "default", "type": "default"}},
  "vision_config": {"depth": 32}
})";

const char* kQwen3Vl = R"({
  "architectures": ["Qwen3VLForConditionalGeneration"], "model_type": "qwen3_vl",
  "text_config": {"model_type": "qwen3_vl_text", "hidden_size": 2560, "head_dim": 128,
    "intermediate_size": 9728, "num_hidden_layers": 36, "num_attention_heads": 32,
    "num_key_value_heads": 8, "vocab_size": 151936, "max_position_embeddings": 262144,
    "rms_norm_eps": 1e-06, "rope_theta": 5000000, "hidden_act": "silu",
    "attention_bias": false, "tie_word_embeddings": true,
    "rope_scaling": {"mrope_interleaved": true, "mrope_section": [24, 20, 20],
                     "rope_type": "default"}}
})";

std::string with_rope(const std::string& rope_scaling) {
  std::string text = kQwen25VlOriginal;
  const std::string old = R"({"type": "mrope", "mrope_section": [16, 24, 24]})";
  text.replace(text.find(old), old.size(), rope_scaling);
  return text;
}

}  // namespace

class QwenVlConfigTest : public QObject {
  Q_OBJECT

 private slots:
  void qwen25VlAsFirstPublished() {
    const ModelConfig c = parse_model_config(kQwen25VlOriginal, "config.json");
    const Architecture& a = find_architecture(c);
    QCOMPARE(std::string(a.label), std::string("Qwen2.5-VL"));
    QVERIFY(a.multimodal);
    QCOMPARE(a.text_prefixes, (std::vector<std::string>{"model.", "model.language_model."}));
    QCOMPARE(a.heads, std::vector<std::string>{"lm_head"});
    QCOMPARE(c.hidden_size, std::int64_t(3584));
    QCOMPARE(c.head_dim, 128);
    QCOMPARE(c.num_kv_heads, 4);
    QVERIFY(c.attention_bias);
    QVERIFY(!c.attention_output_bias);
    QVERIFY(!c.tie_word_embeddings);
    QCOMPARE(c.sliding_windows, std::vector<int>(28, 0));
    // "mrope" is transformers' "default" with sections.
    QCOMPARE(c.rope_scaling.type, RopeScaling::Type::None);
    QCOMPARE(c.rope_scaling.mrope_section, (std::vector<int>{16, 24, 24}));
    QVERIFY(!c.rope_scaling.mrope_interleaved);
  }

  void qwen25VlWithTextConfig() {
    const ModelConfig c = parse_model_config(kQwen25VlNested, "config.json");
    QCOMPARE(c.architecture, std::string("Qwen2_5_VLForConditionalGeneration"));
    QCOMPARE(c.hidden_size, std::int64_t(2048));
    QCOMPARE(c.num_layers, 36);
    QCOMPARE(c.head_dim, 128);
    QVERIFY(c.tie_word_embeddings);
    QVERIFY(c.attention_bias);
    QCOMPARE(c.rope_scaling.type, RopeScaling::Type::None);
    QCOMPARE(c.rope_scaling.mrope_section, (std::vector<int>{16, 24, 24}));
  }

  void qwen2VlIsTheSameTextModel() {
    std::string text = kQwen25VlOriginal;
    const std::string old = "Qwen2_5_VLForConditionalGeneration";
    text.replace(text.find(old), old.size(), "Qwen2VLForConditionalGeneration");
    const ModelConfig c = parse_model_config(text, "config.json");
    QCOMPARE(std::string(find_architecture(c).label), std::string("Qwen2-VL"));
    QVERIFY(c.attention_bias);
    QCOMPARE(c.rope_scaling.mrope_section, (std::vector<int>{16, 24, 24}));
  }

  void qwen3VlInterleavesItsSections() {
    const ModelConfig c = parse_model_config(kQwen3Vl, "config.json");
    QCOMPARE(std::string(find_architecture(c).label), std::string("Qwen3-VL"));
    QVERIFY(c.qk_norm);
    QVERIFY(!c.attention_bias);
    QVERIFY(c.tie_word_embeddings);
    QCOMPARE(c.head_dim, 128);
    QCOMPARE(c.rope_scaling.mrope_section, (std::vector<int>{24, 20, 20}));
    QVERIFY(c.rope_scaling.mrope_interleaved);
  }

  void rejectsSectionsThatDoNotFit_data() {
    QTest::addColumn<std::string>("rope_scaling");
    QTest::addColumn<std::string>("message");
    QTest::newRow("sum") << std::string(R"({"type": "mrope", "mrope_section": [16, 24, 16]})")
                         << std::string(
                                "rope_scaling \"mrope_section\" [16, 24, 16] must add up "
                                "to the 64 rotary frequencies of head_dim 128");
    QTest::newRow("two") << std::string(R"({"type": "mrope", "mrope_section": [32, 32]})")
                         << std::string(
                                "rope_scaling \"mrope_section\" must list three numbers "
                                "of rotary frequencies (temporal, height, width), not "
                                "[32,32]");
    QTest::newRow("negative") << std::string(
                                     R"({"rope_type": "default", "mrope_section": [16, 56, -8]})")
                              << std::string("must list counts of frequencies, not [16,56,-8]");
    QTest::newRow("interleaved")
        << std::string(R"({"mrope_section": [16, 24, 24], "mrope_interleaved": 1})")
        << std::string("\"mrope_interleaved\" must be true or false");
  }

  void rejectsSectionsThatDoNotFit() {
    QFETCH(std::string, rope_scaling);
    QFETCH(std::string, message);
    try {
      parse_model_config(with_rope(rope_scaling), "config.json");
      QFAIL("accepted");
    } catch (const ModelError& error) {
      QVERIFY2(std::string(error.what()).find(message) != std::string::npos, error.what());
    }
  }
};

QUIRE_TEST(QwenVlConfigTest)
#include "test_qwen_vl_config.moc"
