#include "modelgen_test_support.h"

#include <QFile>
#include <cmath>
#include <cstring>

#include "quire/kernels/cpu/half.h"

namespace quire::test {

using engine::modelgen::RandomModelSpec;
using engine::modelgen::WeightFormat;
using kernels::DType;

std::vector<ModelVariant> model_variants() {
  std::vector<ModelVariant> variants;
  variants.reserve(32);  // add() hands out pointers into it
  for (const std::string architecture : {"llama", "mistral", "qwen2"}) {
    int row = 0;
    const auto add = [&](const std::string& label, const std::string& format) {
      RandomModelSpec spec;
      spec.architecture = architecture;
      spec.format = engine::modelgen::parse_format(format);
      spec.seed = 7;
      // Mistral always slides; Qwen2 alternates windowed and full attention.
      if (architecture == "mistral" || (architecture == "qwen2" && row++ % 2 == 1)) {
        spec.sliding_window = 48;
      }
      variants.push_back({architecture + " " + label, spec});
      return &variants.back().spec;
    };
    add("fp16", "fp16");
    RandomModelSpec* bf16 = add("bf16", "bf16");
    bf16->rope_scaling = engine::modelgen::parse_rope_scaling("linear:2");
    bf16->tie_embeddings = false;
    add("exl2:4.0", "exl2:4.0");
    RandomModelSpec* exl2_3 = add("exl2:3.0", "exl2:3.0");
    exl2_3->rope_scaling = engine::modelgen::parse_rope_scaling("llama3");
    exl2_3->head_dim = 64;  // heads * head_dim != hidden: config.json names it
    exl2_3->exl2_head_bits = 8;
    exl2_3->layers = 3;
    add("gptq", "gptq")->tie_embeddings = false;
    RandomModelSpec* v2 = add("gptq v2", "gptq");
    v2->gptq_v2 = true;
    v2->gptq_act_order = false;
    v2->rope_scaling = engine::modelgen::parse_rope_scaling("dynamic:2");
    RandomModelSpec* sharded = add("sharded", "fp16");
    sharded->shards = 3;
    sharded->tie_embeddings = false;
  }
  return variants;
}

namespace {

bool gemma(const RandomModelSpec& spec) {
  return spec.architecture == "gemma2" || spec.architecture == "gemma3";
}

// Where a family's text weights live: Gemma 3 with vision saves them under
// its language model.
std::string text_prefix(const RandomModelSpec& spec) {
  return spec.multimodal ? spec.text_prefix : std::string("model.");
}

std::string head_key(const RandomModelSpec& spec) {
  return spec.multimodal && spec.text_prefix == "language_model.model." ? "language_model.lm_head"
                                                                        : "lm_head";
}

bool sparse_layer(const RandomModelSpec& spec, int layer) {
  if (spec.architecture == "mixtral") return true;
  if (spec.architecture != "qwen3_moe") return false;
  for (const int dense : spec.moe.mlp_only_layers) {
    if (dense == layer) return false;
  }
  return (layer + 1) % spec.moe.decoder_sparse_step == 0;
}

}  // namespace

std::vector<ExpectedLinear> expected_linears(const RandomModelSpec& spec) {
  const std::int64_t head_dim = spec.head_dim != 0 ? spec.head_dim : spec.hidden / spec.heads;
  const std::int64_t q_out = spec.heads * head_dim;
  const std::int64_t kv_out = spec.kv_heads * head_dim;
  const std::int64_t expert_inner =
      spec.moe.expert_intermediate != 0 ? spec.moe.expert_intermediate : spec.intermediate / 2;
  std::vector<ExpectedLinear> linears;
  for (int i = 0; i < spec.layers; ++i) {
    const std::string prefix = text_prefix(spec) + "layers." + std::to_string(i) + ".";
    if (spec.architecture == "phi3") {
      // Fused: q, k and v rows in one projection, gate and up in another.
      linears.push_back({prefix + "self_attn.qkv_proj", spec.hidden, q_out + 2 * kv_out, false});
      linears.push_back({prefix + "self_attn.o_proj", q_out, spec.hidden, false});
      linears.push_back({prefix + "mlp.gate_up_proj", spec.hidden, 2 * spec.intermediate, false});
      linears.push_back({prefix + "mlp.down_proj", spec.intermediate, spec.hidden, false});
      continue;
    }
    linears.push_back({prefix + "self_attn.q_proj", spec.hidden, q_out, false});
    linears.push_back({prefix + "self_attn.k_proj", spec.hidden, kv_out, false});
    linears.push_back({prefix + "self_attn.v_proj", spec.hidden, kv_out, false});
    linears.push_back({prefix + "self_attn.o_proj", q_out, spec.hidden, false});
    if (!sparse_layer(spec, i)) {
      linears.push_back({prefix + "mlp.gate_proj", spec.hidden, spec.intermediate, false});
      linears.push_back({prefix + "mlp.up_proj", spec.hidden, spec.intermediate, false});
      linears.push_back({prefix + "mlp.down_proj", spec.intermediate, spec.hidden, false});
      continue;
    }
    for (int e = 0; e < spec.moe.experts; ++e) {
      if (spec.architecture == "mixtral") {
        const std::string expert = prefix + "block_sparse_moe.experts." + std::to_string(e) + ".";
        linears.push_back({expert + "w1", spec.hidden, spec.intermediate, false});
        linears.push_back({expert + "w2", spec.intermediate, spec.hidden, false});
        linears.push_back({expert + "w3", spec.hidden, spec.intermediate, false});
      } else {
        const std::string expert = prefix + "mlp.experts." + std::to_string(e) + ".";
        linears.push_back({expert + "gate_proj", spec.hidden, expert_inner, false});
        linears.push_back({expert + "up_proj", spec.hidden, expert_inner, false});
        linears.push_back({expert + "down_proj", expert_inner, spec.hidden, false});
      }
    }
  }
  const bool tied = spec.tie_embeddings.value_or(spec.format.kind != WeightFormat::EXL2);
  if (!tied) linears.push_back({head_key(spec), spec.hidden, spec.vocab, true});
  return linears;
}

std::map<std::string, ExpectedTensor> expected_tensors(const RandomModelSpec& spec) {
  const DType dense = spec.format.kind == WeightFormat::BF16 ? DType::BF16 : DType::F16;
  const std::int64_t head_dim = spec.head_dim != 0 ? spec.head_dim : spec.hidden / spec.heads;
  const std::string text = text_prefix(spec);
  std::map<std::string, ExpectedTensor> expected;
  expected[text + "embed_tokens.weight"] = {dense, {spec.vocab, spec.hidden}};
  expected[text + "norm.weight"] = {dense, {spec.hidden}};
  for (int i = 0; i < spec.layers; ++i) {
    const std::string prefix = text + "layers." + std::to_string(i) + ".";
    expected[prefix + "input_layernorm.weight"] = {dense, {spec.hidden}};
    expected[prefix + "post_attention_layernorm.weight"] = {dense, {spec.hidden}};
    if (gemma(spec)) {
      expected[prefix + "pre_feedforward_layernorm.weight"] = {dense, {spec.hidden}};
      expected[prefix + "post_feedforward_layernorm.weight"] = {dense, {spec.hidden}};
    }
    if (spec.architecture == "qwen3" || spec.architecture == "qwen3_moe" ||
        spec.architecture == "gemma3") {
      expected[prefix + "self_attn.q_norm.weight"] = {dense, {head_dim}};
      expected[prefix + "self_attn.k_norm.weight"] = {dense, {head_dim}};
    }
    // Routers stay dense in every format.
    if (sparse_layer(spec, i)) {
      const std::string router =
          spec.architecture == "mixtral" ? "block_sparse_moe.gate.weight" : "mlp.gate.weight";
      expected[prefix + router] = {dense, {spec.moe.experts, spec.hidden}};
    }
  }
  if (spec.multimodal) {
    const bool newer = spec.text_prefix == "model.language_model.";
    const std::string vision =
        newer ? "model.vision_tower.vision_model." : "vision_tower.vision_model.";
    const std::string projector = newer ? "model.multi_modal_projector." : "multi_modal_projector.";
    const engine::modelgen::VisionSpec& v = spec.vision;
    const std::int64_t side = v.image_size / v.patch_size;
    expected[vision + "embeddings.patch_embedding.weight"] = {
        dense, {v.hidden, 3, v.patch_size, v.patch_size}};
    expected[vision + "embeddings.patch_embedding.bias"] = {dense, {v.hidden}};
    expected[vision + "embeddings.position_embedding.weight"] = {dense, {side * side, v.hidden}};
    const auto linear = [&](const std::string& key, std::int64_t in, std::int64_t out) {
      expected[key + ".weight"] = {dense, {out, in}};
      expected[key + ".bias"] = {dense, {out}};
    };
    const auto layer_norm = [&](const std::string& key) {
      expected[key + ".weight"] = {dense, {v.hidden}};
      expected[key + ".bias"] = {dense, {v.hidden}};
    };
    for (int i = 0; i < v.layers; ++i) {
      const std::string prefix = vision + "encoder.layers." + std::to_string(i) + ".";
      layer_norm(prefix + "layer_norm1");
      layer_norm(prefix + "layer_norm2");
      for (const char* projection : {"q_proj", "k_proj", "v_proj", "out_proj"})
        linear(prefix + "self_attn." + projection, v.hidden, v.hidden);
      linear(prefix + "mlp.fc1", v.hidden, v.intermediate);
      linear(prefix + "mlp.fc2", v.intermediate, v.hidden);
    }
    layer_norm(vision + "post_layernorm");
    expected[projector + "mm_input_projection_weight"] = {dense, {v.hidden, spec.hidden}};
    expected[projector + "mm_soft_emb_norm.weight"] = {dense, {v.hidden}};
  }
  for (const ExpectedLinear& linear : expected_linears(spec)) {
    const std::string& key = linear.key;
    const bool qkv = key.ends_with("q_proj") || key.ends_with("k_proj") || key.ends_with("v_proj");
    const bool bias = spec.architecture == "qwen2" && qkv;
    const bool dense_head = linear.head && spec.format.kind != WeightFormat::EXL2;
    if (spec.format.kind == WeightFormat::FP16 || spec.format.kind == WeightFormat::BF16 ||
        dense_head) {
      expected[key + ".weight"] = {dense, {linear.out, linear.in}};
    } else if (spec.format.kind == WeightFormat::EXL2) {
      const std::int64_t columns = (linear.out + 31) / 32 * 32;
      expected[key + ".q_weight"] = {DType::I32, {kAny, columns}};
      expected[key + ".q_invperm"] = {DType::I32, {linear.in}};
      expected[key + ".q_scale"] = {DType::I32, {kAny, columns / 8}};
      expected[key + ".q_scale_max"] = {DType::F16, {kAny}};
      expected[key + ".q_groups"] = {DType::I16, {kAny}};
    } else {
      const std::int64_t groups = (linear.in + spec.gptq_group_size - 1) / spec.gptq_group_size;
      expected[key + ".qweight"] = {DType::I32, {linear.in / 8, linear.out}};
      expected[key + ".qzeros"] = {DType::I32, {groups, linear.out / 8}};
      expected[key + ".scales"] = {DType::F16, {groups, linear.out}};
      expected[key + ".g_idx"] = {DType::I32, {linear.in}};
    }
    // GPTQ tools write a bias on every projection.
    if (bias || (spec.format.kind == WeightFormat::GPTQ && !linear.head)) {
      expected[key + ".bias"] = {dense, {linear.out}};
    }
  }
  return expected;
}

QByteArray read_file(const std::filesystem::path& path) {
  QFile file(QString::fromStdString(path.string()));
  return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

std::map<std::string, QByteArray> directory_contents(const std::filesystem::path& dir) {
  std::map<std::string, QByteArray> contents;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) {
      contents[entry.path().lexically_relative(dir).string()] = read_file(entry.path());
    }
  }
  return contents;
}

std::vector<double> float_values(const engine::io::ModelTensors& tensors, const std::string& name) {
  const engine::io::ModelTensors::Located located = tensors.get(name);
  const std::span<const std::byte> bytes = tensors.data(name);
  std::vector<double> values(static_cast<std::size_t>(located.info->elements()));
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (located.info->dtype == DType::F32) {
      float value = 0.0f;
      std::memcpy(&value, bytes.data() + 4 * i, 4);
      values[i] = value;
      continue;
    }
    std::uint16_t bits = 0;
    std::memcpy(&bits, bytes.data() + 2 * i, 2);
    values[i] = located.info->dtype == DType::BF16 ? kernels::bf16_to_float(bits)
                                                   : kernels::half_to_float(bits);
  }
  return values;
}

Moments moments(const std::vector<double>& values) {
  double sum = 0.0;
  for (const double value : values)
    sum += value;
  const double mean = sum / double(values.size());
  double squares = 0.0;
  for (const double value : values)
    squares += (value - mean) * (value - mean);
  return {mean, std::sqrt(squares / double(values.size()))};
}

}  // namespace quire::test
