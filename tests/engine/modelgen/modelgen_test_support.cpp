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

std::vector<ExpectedLinear> expected_linears(const RandomModelSpec& spec) {
  const std::int64_t head_dim = spec.head_dim != 0 ? spec.head_dim : spec.hidden / spec.heads;
  const std::int64_t q_out = spec.heads * head_dim;
  const std::int64_t kv_out = spec.kv_heads * head_dim;
  std::vector<ExpectedLinear> linears;
  for (int i = 0; i < spec.layers; ++i) {
    const std::string prefix = "model.layers." + std::to_string(i) + ".";
    linears.push_back({prefix + "self_attn.q_proj", spec.hidden, q_out, false});
    linears.push_back({prefix + "self_attn.k_proj", spec.hidden, kv_out, false});
    linears.push_back({prefix + "self_attn.v_proj", spec.hidden, kv_out, false});
    linears.push_back({prefix + "self_attn.o_proj", q_out, spec.hidden, false});
    linears.push_back({prefix + "mlp.gate_proj", spec.hidden, spec.intermediate, false});
    linears.push_back({prefix + "mlp.up_proj", spec.hidden, spec.intermediate, false});
    linears.push_back({prefix + "mlp.down_proj", spec.intermediate, spec.hidden, false});
  }
  const bool tied = spec.tie_embeddings.value_or(spec.format.kind != WeightFormat::EXL2);
  if (!tied) linears.push_back({"lm_head", spec.hidden, spec.vocab, true});
  return linears;
}

std::map<std::string, ExpectedTensor> expected_tensors(const RandomModelSpec& spec) {
  const DType dense = spec.format.kind == WeightFormat::BF16 ? DType::BF16 : DType::F16;
  std::map<std::string, ExpectedTensor> expected;
  expected["model.embed_tokens.weight"] = {dense, {spec.vocab, spec.hidden}};
  expected["model.norm.weight"] = {dense, {spec.hidden}};
  for (int i = 0; i < spec.layers; ++i) {
    const std::string prefix = "model.layers." + std::to_string(i) + ".";
    expected[prefix + "input_layernorm.weight"] = {dense, {spec.hidden}};
    expected[prefix + "post_attention_layernorm.weight"] = {dense, {spec.hidden}};
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
