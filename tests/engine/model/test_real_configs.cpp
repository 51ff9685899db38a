// config.json of models as published (tests/data/configs/): each parses to
// the values its authors wrote, and the architecture rules turn them into
// what transformers runs (no window where "use_sliding_window" is false or
// "sliding_window" is null, head_dim as given, biases, tied embeddings).

#include <QFile>
#include <QTest>

#include "quire/engine/model/model_config.h"
#include "quire/engine/model/rope_frequencies.h"
#include "test_main.h"

using namespace quire::engine;

namespace {

ModelConfig load(const char* name) {
  const QString path = QStringLiteral(QUIRE_TEST_DATA_DIR "/configs/") + QLatin1String(name);
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly))
    throw std::runtime_error("cannot read " + path.toStdString());
  return parse_model_config(file.readAll().toStdString(), path.toStdString());
}

std::vector<int> windows(int layers, int window) {
  return std::vector<int>(static_cast<std::size_t>(layers), window);
}

}  // namespace

class RealConfigsTest : public QObject {
  Q_OBJECT

 private slots:
  void llama31Instruct() {
    const ModelConfig c = load("llama-3.1-8b-instruct.json");
    QCOMPARE(c.architecture, std::string("LlamaForCausalLM"));
    QCOMPARE(c.hidden_size, std::int64_t(4096));
    QCOMPARE(c.num_layers, 32);
    QCOMPARE(c.num_heads, 32);
    QCOMPARE(c.num_kv_heads, 8);
    QCOMPARE(c.head_dim, 128);
    QCOMPARE(c.intermediate_size, std::int64_t(14336));
    QCOMPARE(c.vocab_size, std::int64_t(128256));
    QCOMPARE(c.rms_norm_eps, 1e-5);
    QCOMPARE(c.rope_theta, 500000.0);
    QCOMPARE(c.max_position_embeddings, std::int64_t(131072));
    QCOMPARE(c.rope_scaling.type, RopeScaling::Type::Llama3);
    QCOMPARE(c.rope_scaling.factor, 8.0);
    QCOMPARE(c.rope_scaling.low_freq_factor, 1.0);
    QCOMPARE(c.rope_scaling.high_freq_factor, 4.0);
    QCOMPARE(c.rope_scaling.original_max_position_embeddings, std::int64_t(8192));
    QVERIFY(!c.tie_word_embeddings);
    QVERIFY(!c.attention_bias);
    QVERIFY(!c.attention_output_bias);
    QVERIFY(!c.mlp_bias);
    QCOMPARE(c.sliding_windows, windows(32, 0));
    QCOMPARE(c.torch_dtype, std::string("bfloat16"));
    QVERIFY(c.quantization.method.empty());
  }

  void llama31Exl2KeepsTheOriginalAndReadsTheQuantization() {
    const ModelConfig c = load("llama-3.1-8b-instruct-exl2.json");
    QCOMPARE(c.quantization.method, std::string("exl2"));
    QCOMPARE(c.hidden_size, std::int64_t(4096));
    QCOMPARE(c.rope_scaling.type, RopeScaling::Type::Llama3);
    QCOMPARE(c.vocab_size, std::int64_t(128256));
  }

  void llama32InstructIsTiedWithAWiderScale() {
    const ModelConfig c = load("llama-3.2-3b-instruct.json");
    QCOMPARE(c.hidden_size, std::int64_t(3072));
    QCOMPARE(c.num_layers, 28);
    QCOMPARE(c.num_heads, 24);
    QCOMPARE(c.num_kv_heads, 8);
    QCOMPARE(c.head_dim, 128);
    QCOMPARE(c.intermediate_size, std::int64_t(8192));
    QCOMPARE(c.rope_scaling.type, RopeScaling::Type::Llama3);
    QCOMPARE(c.rope_scaling.factor, 32.0);
    QVERIFY(c.tie_word_embeddings);
    QCOMPARE(c.sliding_windows, windows(28, 0));
  }

  void qwen25InstructHasBiasesAndNoWindow() {
    const ModelConfig c = load("qwen2.5-7b-instruct.json");
    QCOMPARE(c.architecture, std::string("Qwen2ForCausalLM"));
    QCOMPARE(c.hidden_size, std::int64_t(3584));
    QCOMPARE(c.num_layers, 28);
    QCOMPARE(c.num_heads, 28);
    QCOMPARE(c.num_kv_heads, 4);
    QCOMPARE(c.head_dim, 128);
    QCOMPARE(c.intermediate_size, std::int64_t(18944));
    QCOMPARE(c.vocab_size, std::int64_t(152064));
    QCOMPARE(c.rms_norm_eps, 1e-6);
    QCOMPARE(c.rope_theta, 1e6);
    QCOMPARE(c.rope_scaling.type, RopeScaling::Type::None);
    QVERIFY(c.attention_bias);
    QVERIFY(!c.attention_output_bias);
    QVERIFY(!c.mlp_bias);
    QVERIFY(!c.tie_word_embeddings);
    // "sliding_window": 131072 is written, but "use_sliding_window" is false.
    QCOMPARE(c.sliding_window, std::optional<std::int64_t>(131072));
    QCOMPARE(c.use_sliding_window, std::optional<bool>(false));
    QCOMPARE(c.max_window_layers, std::optional<int>(28));
    QCOMPARE(c.sliding_windows, windows(28, 0));
  }

  void qwen25SmallIsTied() {
    const ModelConfig c = load("qwen2.5-1.5b-instruct.json");
    QCOMPARE(c.hidden_size, std::int64_t(1536));
    QCOMPARE(c.num_heads, 12);
    QCOMPARE(c.num_kv_heads, 2);
    QCOMPARE(c.head_dim, 128);
    QCOMPARE(c.vocab_size, std::int64_t(151936));
    QVERIFY(c.tie_word_embeddings);
    QVERIFY(c.attention_bias);
    QCOMPARE(c.max_window_layers, std::optional<int>(21));
    QCOMPARE(c.sliding_windows, windows(28, 0));
  }

  void qwen25WithYarnAsItsModelCardSays() {
    const ModelConfig c = load("qwen2.5-7b-instruct-yarn.json");
    const RopeScaling& s = c.rope_scaling;
    QCOMPARE(s.type, RopeScaling::Type::Yarn);
    QCOMPARE(s.factor, 4.0);
    QCOMPARE(s.original_max_position_embeddings, std::int64_t(32768));
    QCOMPARE(s.beta_fast, 32.0);
    QCOMPARE(s.beta_slow, 1.0);
    QVERIFY(!s.attention_factor);
    QVERIFY(s.truncate);
    QVERIFY(!rope_depends_on_length(c));
  }

  void mistral7bV03HasANullWindow() {
    const ModelConfig c = load("mistral-7b-instruct-v0.3.json");
    QCOMPARE(c.architecture, std::string("MistralForCausalLM"));
    QCOMPARE(c.hidden_size, std::int64_t(4096));
    QCOMPARE(c.num_heads, 32);
    QCOMPARE(c.num_kv_heads, 8);
    QCOMPARE(c.head_dim, 128);
    QCOMPARE(c.vocab_size, std::int64_t(32768));
    QCOMPARE(c.rope_theta, 1e6);
    QVERIFY(!c.sliding_window);
    QCOMPARE(c.sliding_windows, windows(32, 0));
    QVERIFY(!c.attention_bias);
    QVERIFY(!c.tie_word_embeddings);
  }

  void mistralNemoHasAnExplicitHeadDim() {
    const ModelConfig c = load("mistral-nemo-instruct-2407.json");
    QCOMPARE(c.hidden_size, std::int64_t(5120));
    QCOMPARE(c.num_layers, 40);
    QCOMPARE(c.num_heads, 32);
    QCOMPARE(c.num_kv_heads, 8);
    // 5120 / 32 would be 160; the model's heads are 128 wide.
    QCOMPARE(c.head_dim, 128);
    QCOMPARE(c.rotary_dim(), 128);
    QCOMPARE(c.vocab_size, std::int64_t(131072));
    QCOMPARE(c.max_position_embeddings, std::int64_t(1024000));
    QCOMPARE(c.sliding_windows, windows(40, 0));
  }
};

QUIRE_TEST(RealConfigsTest)
#include "test_real_configs.moc"
