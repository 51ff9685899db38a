#include <QTest>
#include <string>

#include "quire/engine/model/architecture.h"
#include "quire/engine/model/model_config.h"
#include "quire/engine/model_error.h"
#include "test_main.h"

using namespace quire::engine;

namespace {

const char* kLlama = R"({
  "architectures": ["LlamaForCausalLM"], "hidden_size": 128, "num_hidden_layers": 2,
  "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 256,
  "vocab_size": 320, "rms_norm_eps": 1e-5, "rope_theta": 500000.0,
  "max_position_embeddings": 2048, "tie_word_embeddings": true,
  "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                   "high_freq_factor": 4.0, "original_max_position_embeddings": 1024}
})";

}  // namespace

class ModelConfigTest : public QObject {
  Q_OBJECT

 private slots:
  void readsALlamaConfig() {
    const ModelConfig config = parse_model_config(kLlama, "config.json");
    QCOMPARE(config.architecture, std::string("LlamaForCausalLM"));
    QCOMPARE(config.hidden_size, std::int64_t(128));
    QCOMPARE(config.num_layers, 2);
    QCOMPARE(config.num_heads, 4);
    QCOMPARE(config.num_kv_heads, 2);
    QCOMPARE(config.head_dim, 32);
    QCOMPARE(config.rotary_dim(), 32);
    QCOMPARE(config.intermediate_size, std::int64_t(256));
    QCOMPARE(config.vocab_size, std::int64_t(320));
    QCOMPARE(config.rms_norm_eps, 1e-5);
    QCOMPARE(config.rope_theta, 500000.0);
    QVERIFY(config.tie_word_embeddings);
    QCOMPARE(config.rope_scaling.type, RopeScaling::Type::Llama3);
    QCOMPARE(config.rope_scaling.factor, 8.0);
    QCOMPARE(config.rope_scaling.original_max_position_embeddings, std::int64_t(1024));
    QCOMPARE(config.sliding_windows, (std::vector<int>{0, 0}));
    QVERIFY(!config.attention_bias);
  }

  void fallsBackToTextConfig() {
    const ModelConfig config = parse_model_config(R"({
      "architectures": ["MistralForCausalLM"],
      "text_config": {"hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 2,
                      "intermediate_size": 96, "vocab_size": 100, "head_dim": 48,
                      "sliding_window": 512}})",
                                                  "config.json");
    QCOMPARE(config.hidden_size, std::int64_t(64));
    QCOMPARE(config.num_kv_heads, 2);
    QCOMPARE(config.head_dim, 48);
    QCOMPARE(config.sliding_windows, (std::vector<int>{512, 512, 512}));
  }

  void qwen2HasQkvBiasAndWindowsFromMaxWindowLayers() {
    const ModelConfig config = parse_model_config(R"({
      "architectures": ["Qwen2ForCausalLM"], "hidden_size": 64, "num_hidden_layers": 4,
      "num_attention_heads": 2, "intermediate_size": 96, "vocab_size": 100,
      "use_sliding_window": true, "sliding_window": 256, "max_window_layers": 2})",
                                                  "config.json");
    QVERIFY(config.attention_bias);
    QVERIFY(!config.attention_output_bias);
    QCOMPARE(config.sliding_windows, (std::vector<int>{0, 0, 256, 256}));
    const ModelConfig plain = parse_model_config(R"({
      "architectures": ["Qwen2ForCausalLM"], "hidden_size": 64, "num_hidden_layers": 2,
      "num_attention_heads": 2, "intermediate_size": 96, "vocab_size": 100,
      "use_sliding_window": false, "sliding_window": 256})",
                                                 "config.json");
    QCOMPARE(plain.sliding_windows, (std::vector<int>{0, 0}));
  }

  void llamaAttentionBiasCoversTheOutputProjection() {
    const ModelConfig config = parse_model_config(R"({
      "architectures": ["LlamaForCausalLM"], "hidden_size": 64, "num_hidden_layers": 1,
      "num_attention_heads": 2, "intermediate_size": 96, "vocab_size": 100,
      "attention_bias": true, "mlp_bias": true})",
                                                  "config.json");
    QVERIFY(config.attention_bias);
    QVERIFY(config.attention_output_bias);
    QVERIFY(config.mlp_bias);
  }

  void rejectsWhatItCannotRun_data() {
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("message");
    const QString base = QStringLiteral(
        R"("hidden_size": 64, "num_hidden_layers": 1, "num_attention_heads": 4,
           "intermediate_size": 96, "vocab_size": 100)");
    QTest::newRow("not json") << "{hidden"
                              << "is not valid JSON";
    QTest::newRow("not an object") << "[1, 2]"
                                   << "must hold a JSON object";
    QTest::newRow("no architectures") << "{" + base + "}"
                                      << "missing \"architectures\"";
    QTest::newRow("unknown architecture")
        << R"({"architectures": ["GPTNeoXForCausalLM"], "model_type": "gpt_neox", )" + base + "}"
        << "\"GPTNeoXForCausalLM\" (model_type \"gpt_neox\") is not supported; Quire runs "
           "LlamaForCausalLM, MistralForCausalLM, MixtralForCausalLM, Qwen2ForCausalLM, "
           "Qwen3ForCausalLM, Qwen3MoeForCausalLM, Gemma2ForCausalLM, Gemma3ForCausalLM, "
           "Gemma3ForConditionalGeneration, Phi3ForCausalLM, Qwen2VLForConditionalGeneration, "
           "Qwen2_5_VLForConditionalGeneration, Qwen3VLForConditionalGeneration, "
           "Mistral3ForConditionalGeneration";
    QTest::newRow("Ministral 3 in a Mistral 3 wrapper")
        << R"({"architectures": ["Mistral3ForConditionalGeneration"], "model_type": "mistral3",
               "text_config": {"model_type": "ministral3", )" +
               base + "}}"
        << "text_config.model_type \"ministral3\" is not a language model Quire runs in "
           "Mistral3ForConditionalGeneration (it runs \"mistral\": Mistral 3 (multimodal))";
    QTest::newRow("more experts per token than experts")
        << R"({"architectures": ["MixtralForCausalLM"], "num_local_experts": 4,
               "num_experts_per_tok": 6, )" +
               base + "}"
        << "\"num_experts_per_tok\" (6) is larger than the 4 experts (\"num_local_experts\")";
    QTest::newRow("a dense layer that does not exist")
        << R"({"architectures": ["Qwen3MoeForCausalLM"], "mlp_only_layers": [3], )" + base + "}"
        << "\"mlp_only_layers\" lists 3; layers run from 0 to 0";
    QTest::newRow("an activation Quire does not run")
        << R"({"architectures": ["LlamaForCausalLM"], "hidden_act": "relu2", )" + base + "}"
        << "\"hidden_act\" is \"relu2\"; Quire's gated MLPs run silu and gelu_pytorch_tanh";
    QTest::newRow("longrope lists of the wrong length")
        << R"({"architectures": ["Phi3ForCausalLM"], "rope_scaling": {"type": "longrope",
               "short_factor": [1.0], "long_factor": [2.0]}, )" +
               base + "}"
        << "rope_scaling lists 1 short_factor values, but the rotary dimension 16 has 8 "
           "frequencies";
    QTest::newRow("longrope without its long factors")
        << R"({"architectures": ["Phi3ForCausalLM"], "rope_scaling": {"type": "longrope",
               "short_factor": [1.0]}, )" +
               base + "}"
        << "rope_scaling of type longrope needs \"long_factor\"";
    QTest::newRow("no rotary dimensions left")
        << R"({"architectures": ["Phi3ForCausalLM"], "partial_rotary_factor": 0.01, )" + base + "}"
        << "\"partial_rotary_factor\" 0.010000 leaves no rotary dimensions of head_dim 16";
    QTest::newRow("missing hidden size")
        << R"({"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 1,
               "num_attention_heads": 4, "intermediate_size": 96, "vocab_size": 100})"
        << "missing \"hidden_size\"";
    QTest::newRow("string layers") << R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64,
               "num_hidden_layers": "2", "num_attention_heads": 4, "intermediate_size": 96,
               "vocab_size": 100})"
                                   << "\"num_hidden_layers\" must be an integer";
    QTest::newRow("negative vocab")
        << R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64, "num_hidden_layers": 1,
               "num_attention_heads": 4, "intermediate_size": 96, "vocab_size": -5})"
        << "\"vocab_size\" is -5";
    QTest::newRow("heads not a multiple of kv heads")
        << R"({"architectures": ["LlamaForCausalLM"], "num_key_value_heads": 3, )" + base + "}"
        << "not a multiple of num_key_value_heads (3)";
    QTest::newRow("unknown rope type")
        << R"({"architectures": ["LlamaForCausalLM"], "rope_scaling": {"rope_type": "ntk-v9",
               "factor": 2.0}, )" +
               base + "}"
        << "rope_scaling type \"ntk-v9\" is not supported; Quire runs default";
    QTest::newRow("yarn without factor")
        << R"({"architectures": ["Qwen2ForCausalLM"], "rope_scaling": {"type": "yarn"}, )" + base +
               "}"
        << "rope_scaling of type \"yarn\" needs \"factor\"";
    QTest::newRow("llama3 without its bands")
        << R"({"architectures": ["LlamaForCausalLM"], "rope_scaling": {"rope_type": "llama3",
               "factor": 8.0}, )" +
               base + "}"
        << "rope_scaling of type \"llama3\" needs \"low_freq_factor\"";
    QTest::newRow("factor below one")
        << R"({"architectures": ["LlamaForCausalLM"], "rope_scaling": {"rope_type": "linear",
               "factor": 0.5}, )" +
               base + "}"
        << "rope_scaling \"factor\" is 0.5; it must be at least 1";
    QTest::newRow("layer types length")
        << R"({"architectures": ["Qwen2ForCausalLM"], "layer_types": ["full_attention",
               "full_attention"], )" +
               base + "}"
        << "\"layer_types\" lists 2 layers";
  }

  void rejectsWhatItCannotRun() {
    QFETCH(QString, json);
    QFETCH(QString, message);
    try {
      parse_model_config(json.toStdString(), "model/config.json");
      QFAIL("the configuration was accepted");
    } catch (const ModelError& error) {
      const QString text = QString::fromStdString(error.what());
      QVERIFY2(text.startsWith(QStringLiteral("model/config.json")), qPrintable(text));
      QVERIFY2(text.contains(message), qPrintable(text));
    }
  }

  void missingFileNamesTheDirectory() {
    try {
      load_model_config("/nonexistent/model");
      QFAIL("no error");
    } catch (const ModelError& error) {
      QVERIFY(std::string(error.what()).find("no config.json in /nonexistent/model") !=
              std::string::npos);
    }
  }

  // A model directory's tokenizer is either file: the advice must not send
  // the owner of a tokenizer.json model looking for a tokenizer.model.
  void missingFileNamesEitherTokenizer() {
    try {
      load_model_config("/nonexistent/model");
      QFAIL("no error");
    } catch (const ModelError& error) {
      QCOMPARE(std::string(error.what()),
               std::string("no config.json in /nonexistent/model; choose a Hugging Face model "
                           "directory (config.json, *.safetensors weights and a tokenizer: "
                           "tokenizer.json or tokenizer.model)"));
    }
  }
};

QUIRE_TEST(ModelConfigTest)
#include "test_model_config.moc"
