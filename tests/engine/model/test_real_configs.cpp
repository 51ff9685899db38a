// config.json of models as published (tests/data/configs/): each parses to
// the values its authors wrote, and the architecture rules turn them into
// what transformers runs (no window where "use_sliding_window" is false or
// "sliding_window" is null, head_dim as given, biases, tied embeddings).

#include <QFile>
#include <QTest>
#include <cmath>

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

  void qwen3DenseWritesItsHeadDimAndNormsEachHead() {
    const ModelConfig c = load("qwen3-8b.json");
    QCOMPARE(c.architecture, std::string("Qwen3ForCausalLM"));
    QCOMPARE(c.hidden_size, std::int64_t(4096));
    QCOMPARE(c.num_layers, 36);
    QCOMPARE(c.num_heads, 32);
    QCOMPARE(c.num_kv_heads, 8);
    QCOMPARE(c.head_dim, 128);
    QCOMPARE(c.intermediate_size, std::int64_t(12288));
    QCOMPARE(c.vocab_size, std::int64_t(151936));
    QCOMPARE(c.rope_theta, 1e6);
    QVERIFY(c.qk_norm);
    QVERIFY(!c.tie_word_embeddings);
    QCOMPARE(c.sliding_windows, windows(36, 0));
    QCOMPARE(c.moe.experts, 0);
    QCOMPARE(c.activation, Activation::Silu);
  }

  void qwen3MoeRoutesEveryLayer() {
    const ModelConfig c = load("qwen3-30b-a3b.json");
    QCOMPARE(c.architecture, std::string("Qwen3MoeForCausalLM"));
    QCOMPARE(c.model_type, std::string("qwen3_moe"));
    QCOMPARE(c.hidden_size, std::int64_t(2048));
    QCOMPARE(c.num_layers, 48);
    QCOMPARE(c.num_heads, 32);
    QCOMPARE(c.num_kv_heads, 4);
    QCOMPARE(c.head_dim, 128);
    QVERIFY(c.qk_norm);
    QCOMPARE(c.moe.experts, 128);
    QCOMPARE(c.moe.experts_per_token, 8);
    QCOMPARE(c.moe.intermediate_size, std::int64_t(768));
    QVERIFY(c.moe.normalize_top_k);
    QCOMPARE(c.moe.sparse_layers, std::vector<bool>(48, true));
    QCOMPARE(c.sliding_windows, windows(48, 0));
  }

  void mixtralHasEightExpertsTwoPerToken() {
    const ModelConfig c = load("mixtral-8x7b-instruct-v0.1.json");
    QCOMPARE(c.architecture, std::string("MixtralForCausalLM"));
    QCOMPARE(c.hidden_size, std::int64_t(4096));
    QCOMPARE(c.num_layers, 32);
    QCOMPARE(c.num_kv_heads, 8);
    QCOMPARE(c.intermediate_size, std::int64_t(14336));
    QCOMPARE(c.vocab_size, std::int64_t(32000));
    QCOMPARE(c.moe.experts, 8);
    QCOMPARE(c.moe.experts_per_token, 2);
    QCOMPARE(c.moe.intermediate_size, std::int64_t(14336));
    QVERIFY(c.moe.normalize_top_k);
    QCOMPARE(c.moe.sparse_layers, std::vector<bool>(32, true));
    // "sliding_window": null.
    QCOMPARE(c.sliding_windows, windows(32, 0));
  }

  void gemma2SlidesOnAlternateLayersAndCapsItsScores() {
    const ModelConfig c = load("gemma-2-9b-it.json");
    QCOMPARE(c.architecture, std::string("Gemma2ForCausalLM"));
    QCOMPARE(c.hidden_size, std::int64_t(3584));
    QCOMPARE(c.num_layers, 42);
    QCOMPARE(c.num_heads, 16);
    QCOMPARE(c.num_kv_heads, 8);
    QCOMPARE(c.head_dim, 256);
    QCOMPARE(c.vocab_size, std::int64_t(256000));
    QCOMPARE(c.activation, Activation::GeluTanh);
    QCOMPARE(c.norm_weight_offset, 1.0);
    QVERIFY(c.sandwich_norms);
    QVERIFY(c.scale_embeddings);
    QVERIFY(!c.qk_norm);
    QCOMPARE(c.attention_softcap, 50.0);
    QCOMPARE(c.final_softcap, 30.0);
    // This revision of the file writes 224 (hidden / heads), not head_dim.
    QCOMPARE(c.query_pre_attn_scalar, std::optional<double>(224.0));
    QCOMPARE(c.attention_scale(), 1.0 / std::sqrt(224.0));
    // tie_word_embeddings is left out: Gemma2Config's default ties them.
    QVERIFY(c.tie_word_embeddings);
    // No layer_types: the first layer slides, the second does not, and so on.
    std::vector<int> expected(42, 0);
    for (std::size_t i = 0; i < expected.size(); i += 2)
      expected[i] = 4096;
    QCOMPARE(c.sliding_windows, expected);
    QVERIFY(!c.rope_local_theta);
  }

  void gemma3MultimodalTakesTheTextConfigAndItsClassDefaults() {
    const ModelConfig c = load("gemma-3-4b-it.json");
    QCOMPARE(c.architecture, std::string("Gemma3ForConditionalGeneration"));
    QCOMPARE(c.model_type, std::string("gemma3"));
    QCOMPARE(c.hidden_size, std::int64_t(2560));
    QCOMPARE(c.num_layers, 34);
    QCOMPARE(c.intermediate_size, std::int64_t(10240));
    // Not in the file: Gemma3TextConfig's defaults.
    QCOMPARE(c.num_heads, 8);
    QCOMPARE(c.num_kv_heads, 4);
    QCOMPARE(c.head_dim, 256);
    QCOMPARE(c.vocab_size, std::int64_t(262208));
    QCOMPARE(c.rope_theta, 1e6);
    QCOMPARE(c.rope_local_theta, std::optional<double>(10000.0));
    QCOMPARE(c.query_pre_attn_scalar, std::optional<double>(256.0));
    QCOMPARE(c.max_position_embeddings, std::int64_t(131072));
    QCOMPARE(c.rms_norm_eps, 1e-6);
    QVERIFY(c.tie_word_embeddings);
    QCOMPARE(c.activation, Activation::GeluTanh);
    QVERIFY(c.qk_norm);
    QCOMPARE(c.attention_softcap, 0.0);
    QCOMPARE(c.final_softcap, 0.0);
    QCOMPARE(c.rope_scaling.type, RopeScaling::Type::Linear);
    QCOMPARE(c.rope_scaling.factor, 8.0);
    QCOMPARE(c.torch_dtype, std::string("bfloat16"));
    // Five local layers of 1024 tokens to one global one.
    std::vector<int> expected(34, 1024);
    for (std::size_t i = 5; i < expected.size(); i += 6)
      expected[i] = 0;
    QCOMPARE(c.sliding_windows, expected);
    QVERIFY(c.local_rope(0));
    QVERIFY(!c.local_rope(5));
  }

  void phi35MiniUsesLongRopeOverItsOriginalContext() {
    const ModelConfig c = load("phi-3.5-mini-instruct.json");
    QCOMPARE(c.architecture, std::string("Phi3ForCausalLM"));
    QCOMPARE(c.hidden_size, std::int64_t(3072));
    QCOMPARE(c.num_layers, 32);
    QCOMPARE(c.num_heads, 32);
    QCOMPARE(c.num_kv_heads, 32);
    QCOMPARE(c.head_dim, 96);
    QCOMPARE(c.rotary_dim(), 96);
    QCOMPARE(c.intermediate_size, std::int64_t(8192));
    QCOMPARE(c.vocab_size, std::int64_t(32064));
    const RopeScaling& s = c.rope_scaling;
    QCOMPARE(s.type, RopeScaling::Type::LongRope);
    QCOMPARE(s.short_factor.size(), std::size_t(48));
    QCOMPARE(s.long_factor.size(), std::size_t(48));
    QCOMPARE(s.short_factor.front(), 1.0);
    QCOMPARE(s.long_factor.front(), 1.0800000429153442);
    QCOMPARE(s.original_max_position_embeddings, std::int64_t(4096));
    QCOMPARE(s.factor, 32.0);  // 131072 / 4096
    QVERIFY(rope_depends_on_length(c));
    // The short factors up to the original context, the long ones beyond,
    // and cos and sin scaled by sqrt(1 + ln 32 / ln 4096).
    const RopeFrequencies short_rope = rope_frequencies(c, 4096);
    const RopeFrequencies long_rope = rope_frequencies(c, 4097);
    QCOMPARE(short_rope.inv_freq.front(), 1.0f);
    QCOMPARE(long_rope.inv_freq.front(), 1.0f / 1.0800000429153442f);
    QCOMPARE(long_rope.attention_factor,
             static_cast<float>(std::sqrt(1.0 + std::log(32.0) / std::log(4096.0))));
    QCOMPARE(c.sliding_windows, windows(32, 262144));
    // A window wider than the 131072 positions hides nothing.
    QCOMPARE(c.binding_window(0), 0);
    QCOMPARE(c.uniform_sliding_window(), 0);
  }

  // Phi-4-mini: 24 query heads of 128 over 8 key/value heads, RoPE on the
  // first 96 dimensions of each (partial_rotary_factor 0.75) with 48 longrope
  // factors each, a tied head, and the keys of its remote code that Quire
  // does not read (full_attn_mod, interpolate_factor, lm_head_bias, auto_map).
  void phi4MiniRotatesThreeQuartersOfEachHead() {
    const ModelConfig c = load("phi-4-mini-instruct.json");
    QCOMPARE(c.architecture, std::string("Phi3ForCausalLM"));
    QCOMPARE(c.model_type, std::string("phi3"));
    QCOMPARE(c.hidden_size, std::int64_t(3072));
    QCOMPARE(c.num_layers, 32);
    QCOMPARE(c.num_heads, 24);
    QCOMPARE(c.num_kv_heads, 8);
    QCOMPARE(c.head_dim, 128);  // hidden / heads: Phi3Config reads no head_dim
    QCOMPARE(c.partial_rotary_factor, 0.75);
    QCOMPARE(c.rotary_dim(), 96);
    QCOMPARE(c.intermediate_size, std::int64_t(8192));
    QCOMPARE(c.vocab_size, std::int64_t(200064));
    QCOMPARE(c.rms_norm_eps, 1e-5);
    QCOMPARE(c.rope_theta, 10000.0);
    QCOMPARE(c.max_position_embeddings, std::int64_t(131072));
    QCOMPARE(c.attention_scale(), 1.0 / std::sqrt(128.0));
    QCOMPARE(c.activation, Activation::Silu);
    QVERIFY(c.tie_word_embeddings);
    QVERIFY(!c.attention_bias);
    QVERIFY(!c.attention_output_bias);
    QVERIFY(!c.mlp_bias);
    QVERIFY(!c.qk_norm);
    QCOMPARE(c.torch_dtype, std::string("bfloat16"));

    const RopeScaling& s = c.rope_scaling;
    QCOMPARE(s.type, RopeScaling::Type::LongRope);
    QCOMPARE(s.short_factor, std::vector<double>(48, 1.0));
    QCOMPARE(s.long_factor.size(), std::size_t(48));
    QCOMPARE(s.long_factor.front(), 1.0);
    QCOMPARE(s.long_factor[1], 1.118320672);
    QCOMPARE(s.long_factor.back(), 47.77);
    QCOMPARE(s.original_max_position_embeddings, std::int64_t(4096));
    QCOMPARE(s.factor, 32.0);  // 131072 / 4096
    QVERIFY(!s.attention_factor);
    QVERIFY(rope_depends_on_length(c));
    const RopeFrequencies short_rope = rope_frequencies(c, 4096);
    const RopeFrequencies long_rope = rope_frequencies(c, 4097);
    QCOMPARE(short_rope.inv_freq.size(), std::size_t(48));
    QCOMPARE(short_rope.inv_freq.front(), 1.0f);
    QCOMPARE(long_rope.inv_freq.back(),
             static_cast<float>(1.0 / 47.77 / std::pow(10000.0, 94.0 / 96.0)));
    // sqrt(1 + ln 32 / ln 4096) = sqrt(1 + 5 / 12), long and short alike.
    const float attention = static_cast<float>(std::sqrt(1.0 + 5.0 / 12.0));
    QCOMPARE(short_rope.attention_factor, attention);
    QCOMPARE(long_rope.attention_factor, attention);

    // Every layer slides over 262144 positions as written, more than the
    // model reads: no window binds.
    QCOMPARE(c.sliding_window, std::optional<std::int64_t>(262144));
    QCOMPARE(c.sliding_windows, windows(32, 262144));
    for (std::size_t layer = 0; layer < 32; ++layer)
      QCOMPARE(c.binding_window(layer), 0);
    QCOMPARE(c.uniform_sliding_window(), 0);
  }

  // A window binds once it is shorter than the context: over 4096 positions
  // a window of 4096 lets the last query see every key, one of 4095 hides
  // the first.
  void aWindowBindsOnlyInsideTheContext() {
    ModelConfig c = load("phi-4-mini-instruct.json");
    c.max_position_embeddings = 4096;
    c.sliding_windows.assign(32, 4096);
    QCOMPARE(c.binding_window(0), 0);
    c.sliding_windows.assign(32, 4095);
    QCOMPARE(c.binding_window(0), 4095);
    QCOMPARE(c.uniform_sliding_window(), 4095);
    c.sliding_windows[3] = 0;
    QCOMPARE(c.uniform_sliding_window(), 0);
  }
};

QUIRE_TEST(RealConfigsTest)
#include "test_real_configs.moc"
