#include "tensor_builder.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "quire/engine/formats/exl2_writer.h"
#include "quire/engine/formats/gptq_writer.h"
#include "quire/engine/modelgen/random_stream.h"
#include "quire/kernels/cpu/half.h"

namespace quire::engine::modelgen::detail {
namespace {

using kernels::DType;

enum class Bias { None, Random, Zero };

class TensorBuilder {
 public:
  TensorBuilder(const RandomModelSpec& spec, io::SafetensorsWriter& writer)
      : spec_(spec), writer_(writer) {}

  void build() {
    const std::int64_t hidden = spec_.hidden;
    const std::int64_t q_out = std::int64_t{spec_.heads} * spec_.resolved_head_dim();
    const std::int64_t kv_out = std::int64_t{spec_.kv_heads} * spec_.resolved_head_dim();
    const std::int64_t inner = spec_.intermediate;
    // Qwen2 has biases on q, k and v; GPTQ tools write a (zero) bias on every
    // projection, whatever the architecture.
    const Bias qkv_bias = spec_.architecture == "qwen2" ? Bias::Random : Bias::None;

    add_dense("model.embed_tokens.weight", {spec_.vocab, hidden}, 0.0, 1.0);
    for (int i = 0; i < spec_.layers; ++i) {
      const std::string prefix = "model.layers." + std::to_string(i) + ".";
      add_norm(prefix + "input_layernorm.weight");
      add_linear(prefix + "self_attn.q_proj", hidden, q_out, qkv_bias);
      add_linear(prefix + "self_attn.k_proj", hidden, kv_out, qkv_bias);
      add_linear(prefix + "self_attn.v_proj", hidden, kv_out, qkv_bias);
      add_linear(prefix + "self_attn.o_proj", q_out, hidden, Bias::None);
      add_norm(prefix + "post_attention_layernorm.weight");
      add_linear(prefix + "mlp.gate_proj", hidden, inner, Bias::None);
      add_linear(prefix + "mlp.up_proj", hidden, inner, Bias::None);
      add_linear(prefix + "mlp.down_proj", inner, hidden, Bias::None);
    }
    add_norm("model.norm.weight");
    if (!spec_.resolved_tie()) add_head(hidden, spec_.vocab);
  }

 private:
  // Embeddings, norms and biases: BF16 in a BF16 model, FP16 otherwise
  // (quantized models keep them in FP16, as their converters do).
  DType dense_dtype() const {
    return spec_.format.kind == WeightFormat::BF16 ? DType::BF16 : DType::F16;
  }

  std::vector<float> draw(const std::string& name, std::int64_t count, double mean,
                          double deviation) const {
    RandomStream stream(spec_.seed, name);
    std::vector<float> values(static_cast<std::size_t>(count));
    for (float& value : values)
      value = static_cast<float>(mean + deviation * stream.normal());
    return values;
  }

  void add_values(const std::string& name, std::vector<std::int64_t> shape,
                  const std::vector<float>& values, DType dtype) {
    std::vector<std::byte> bytes(values.size() * 2);
    for (std::size_t i = 0; i < values.size(); ++i) {
      const std::uint16_t bits = dtype == DType::BF16 ? kernels::float_to_bf16(values[i])
                                                      : kernels::float_to_half(values[i]);
      std::memcpy(bytes.data() + 2 * i, &bits, 2);
    }
    writer_.add(name, dtype, std::move(shape), std::move(bytes));
  }

  void add_dense(const std::string& name, std::vector<std::int64_t> shape, double mean,
                 double deviation) {
    std::int64_t count = 1;
    for (const std::int64_t dim : shape)
      count *= dim;
    add_values(name, std::move(shape), draw(name, count, mean, deviation), dense_dtype());
  }

  void add_norm(const std::string& name) { add_dense(name, {spec_.hidden}, 1.0, 0.1); }

  void add_bias(const std::string& key, std::int64_t out, Bias bias) {
    if (bias == Bias::Random) add_dense(key + ".bias", {out}, 0.0, 0.1);
    if (bias == Bias::Zero)
      add_values(key + ".bias", {out}, std::vector<float>(static_cast<std::size_t>(out)),
                 DType::F16);
  }

  void add_encoded(const std::string& key, std::vector<formats::NamedTensor> tensors) {
    for (formats::NamedTensor& tensor : tensors) {
      writer_.add(key + "." + tensor.suffix, tensor.dtype, std::move(tensor.shape),
                  std::move(tensor.bytes));
    }
  }

  // A seed for the layer's permutation or act-order, from its own stream.
  std::uint64_t layout_seed(const std::string& key) const {
    return RandomStream(spec_.seed, key + "#layout").next();
  }

  void add_exl2(const std::string& key, const std::vector<float>& weight, std::int64_t in,
                std::int64_t out, std::vector<formats::Exl2GroupSpec> groups) {
    formats::Exl2QuantizeOptions options;
    options.groups = std::move(groups);
    options.permutation_seed = layout_seed(key);
    add_encoded(key, formats::quantize_exl2(weight, out, in, options).tensors());
  }

  void add_linear(const std::string& key, std::int64_t in, std::int64_t out, Bias bias) {
    const std::vector<float> weight =
        draw(key + ".weight", out * in, 0.0, 1.0 / std::sqrt(static_cast<double>(in)));
    switch (spec_.format.kind) {
      case WeightFormat::FP16:
      case WeightFormat::BF16:
        add_values(key + ".weight", {out, in}, weight, dense_dtype());
        break;
      case WeightFormat::EXL2:
        add_exl2(key, weight, in, out, formats::plan_exl2_groups(in, spec_.format.exl2_bits, 32));
        break;
      case WeightFormat::GPTQ: {
        formats::GptqQuantizeOptions options;
        options.group_size = spec_.gptq_group_size;
        if (spec_.gptq_act_order) options.act_order_seed = layout_seed(key);
        options.exact_zeros = spec_.gptq_v2;
        options.write_g_idx = true;
        add_encoded(key, formats::quantize_gptq(weight, out, in, options).tensors());
        if (bias == Bias::None) bias = Bias::Zero;
        break;
      }
    }
    add_bias(key, out, bias);
  }

  // lm_head: EXL2 at head_bits in every group, as exllamav2's converter
  // quantizes it; dense otherwise (GPTQ leaves the head in FP16).
  void add_head(std::int64_t hidden, std::int64_t vocab) {
    const std::string key = "lm_head";
    if (spec_.format.kind != WeightFormat::EXL2) {
      add_dense(key + ".weight", {vocab, hidden}, 0.0,
                1.0 / std::sqrt(static_cast<double>(hidden)));
      return;
    }
    const std::vector<float> weight =
        draw(key + ".weight", vocab * hidden, 0.0, 1.0 / std::sqrt(static_cast<double>(hidden)));
    std::vector<formats::Exl2GroupSpec> groups(static_cast<std::size_t>(hidden / 32),
                                               {spec_.exl2_head_bits, 32});
    add_exl2(key, weight, hidden, vocab, std::move(groups));
  }

  const RandomModelSpec& spec_;
  io::SafetensorsWriter& writer_;
};

}  // namespace

void add_model_tensors(const RandomModelSpec& spec, io::SafetensorsWriter& writer) {
  TensorBuilder(spec, writer).build();
}

}  // namespace quire::engine::modelgen::detail
