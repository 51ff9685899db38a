#include "tensor_builder.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "quire/engine/formats/exl2_writer.h"
#include "quire/engine/formats/gptq_writer.h"
#include "quire/engine/modelgen/random_stream.h"
#include "quire/kernels/cpu/half.h"

namespace quire::engine::modelgen::detail {
namespace {

using kernels::DType;

enum class Bias { None, Random, Zero };

struct PendingTensor {
  std::string name;
  DType dtype;
  std::vector<std::int64_t> shape;
  std::vector<std::byte> bytes;
};
using Tensors = std::vector<PendingTensor>;

// Runs every task on all hardware threads. Drawing and quantizing the
// tensors of a model with 8B parameters takes minutes on one thread; each
// tensor comes from its own named random stream, so the order the tasks run
// in changes nothing.
void run_in_parallel(const std::vector<std::function<void()>>& tasks) {
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  const auto worker = [&] {
    for (std::size_t i = next++; i < tasks.size(); i = next++) {
      try {
        tasks[i]();
      } catch (...) {
        const std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
    }
  };
  const std::size_t threads =
      std::min<std::size_t>(tasks.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t)
    pool.emplace_back(worker);
  worker();
  for (std::thread& thread : pool)
    thread.join();
  if (failure) std::rethrow_exception(failure);
}

class TensorBuilder {
 public:
  explicit TensorBuilder(const RandomModelSpec& spec) : spec_(spec) {}

  // Every tensor, drawn in parallel, then added to the writer in the order a
  // reader would list them.
  void write_to(io::SafetensorsWriter& writer) {
    build();
    std::vector<Tensors> results(tasks_.size());
    std::vector<std::function<void()>> runs;
    for (std::size_t i = 0; i < tasks_.size(); ++i)
      runs.push_back([this, i, &results] { tasks_[i](results[i]); });
    run_in_parallel(runs);
    for (Tensors& tensors : results) {
      for (PendingTensor& tensor : tensors)
        writer.add(std::move(tensor.name), tensor.dtype, std::move(tensor.shape),
                   std::move(tensor.bytes));
    }
  }

 private:
  void build() {
    const std::int64_t hidden = spec_.hidden;
    const std::int64_t q_out = std::int64_t{spec_.heads} * spec_.resolved_head_dim();
    const std::int64_t kv_out = std::int64_t{spec_.kv_heads} * spec_.resolved_head_dim();
    const std::int64_t inner = spec_.intermediate;
    // Qwen2 has biases on q, k and v; GPTQ tools write a (zero) bias on every
    // projection, whatever the architecture.
    const Bias qkv_bias = spec_.architecture == "qwen2" ? Bias::Random : Bias::None;

    later([=, this](Tensors& out) {
      add_dense(out, "model.embed_tokens.weight", {spec_.vocab, hidden}, 0.0, 1.0);
    });
    for (int i = 0; i < spec_.layers; ++i) {
      const std::string prefix = "model.layers." + std::to_string(i) + ".";
      later([=, this](Tensors& out) { add_norm(out, prefix + "input_layernorm.weight"); });
      linear_later(prefix + "self_attn.q_proj", hidden, q_out, qkv_bias);
      linear_later(prefix + "self_attn.k_proj", hidden, kv_out, qkv_bias);
      linear_later(prefix + "self_attn.v_proj", hidden, kv_out, qkv_bias);
      linear_later(prefix + "self_attn.o_proj", q_out, hidden, Bias::None);
      if (spec_.architecture == "qwen3") {
        // One weight of head_dim per projection, shared by its heads.
        const std::int64_t head_dim = spec_.resolved_head_dim();
        for (const char* norm : {"self_attn.q_norm.weight", "self_attn.k_norm.weight"}) {
          later([=, this](Tensors& out) { add_dense(out, prefix + norm, {head_dim}, 1.0, 0.1); });
        }
      }
      later([=, this](Tensors& out) { add_norm(out, prefix + "post_attention_layernorm.weight"); });
      linear_later(prefix + "mlp.gate_proj", hidden, inner, Bias::None);
      linear_later(prefix + "mlp.up_proj", hidden, inner, Bias::None);
      linear_later(prefix + "mlp.down_proj", inner, hidden, Bias::None);
    }
    later([this](Tensors& out) { add_norm(out, "model.norm.weight"); });
    if (!spec_.resolved_tie())
      later([=, this](Tensors& out) { add_head(out, hidden, spec_.vocab); });
  }

  void later(std::function<void(Tensors&)> task) { tasks_.push_back(std::move(task)); }

  void linear_later(const std::string& key, std::int64_t in, std::int64_t out, Bias bias) {
    later([=, this](Tensors& tensors) { add_linear(tensors, key, in, out, bias); });
  }

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

  static void add_values(Tensors& out, const std::string& name, std::vector<std::int64_t> shape,
                         const std::vector<float>& values, DType dtype) {
    std::vector<std::byte> bytes(values.size() * 2);
    for (std::size_t i = 0; i < values.size(); ++i) {
      const std::uint16_t bits = dtype == DType::BF16 ? kernels::float_to_bf16(values[i])
                                                      : kernels::float_to_half(values[i]);
      std::memcpy(bytes.data() + 2 * i, &bits, 2);
    }
    out.push_back({name, dtype, std::move(shape), std::move(bytes)});
  }

  void add_dense(Tensors& out, const std::string& name, std::vector<std::int64_t> shape,
                 double mean, double deviation) {
    std::int64_t count = 1;
    for (const std::int64_t dim : shape)
      count *= dim;
    add_values(out, name, std::move(shape), draw(name, count, mean, deviation), dense_dtype());
  }

  void add_norm(Tensors& out, const std::string& name) {
    add_dense(out, name, {spec_.hidden}, 1.0, 0.1);
  }

  void add_bias(Tensors& tensors, const std::string& key, std::int64_t out, Bias bias) {
    if (bias == Bias::Random) add_dense(tensors, key + ".bias", {out}, 0.0, 0.1);
    if (bias == Bias::Zero)
      add_values(tensors, key + ".bias", {out}, std::vector<float>(static_cast<std::size_t>(out)),
                 DType::F16);
  }

  static void add_encoded(Tensors& out, const std::string& key,
                          std::vector<formats::NamedTensor> tensors) {
    for (formats::NamedTensor& tensor : tensors) {
      out.push_back({key + "." + tensor.suffix, tensor.dtype, std::move(tensor.shape),
                     std::move(tensor.bytes)});
    }
  }

  // A seed for the layer's permutation or act-order, from its own stream.
  std::uint64_t layout_seed(const std::string& key) const {
    return RandomStream(spec_.seed, key + "#layout").next();
  }

  void add_exl2(Tensors& out, const std::string& key, const std::vector<float>& weight,
                std::int64_t in, std::int64_t rows, std::vector<formats::Exl2GroupSpec> groups) {
    formats::Exl2QuantizeOptions options;
    options.groups = std::move(groups);
    options.permutation_seed = layout_seed(key);
    add_encoded(out, key, formats::quantize_exl2(weight, rows, in, options).tensors());
  }

  void add_linear(Tensors& tensors, const std::string& key, std::int64_t in, std::int64_t out,
                  Bias bias) {
    const std::vector<float> weight =
        draw(key + ".weight", out * in, 0.0, 1.0 / std::sqrt(static_cast<double>(in)));
    switch (spec_.format.kind) {
      case WeightFormat::FP16:
      case WeightFormat::BF16:
        add_values(tensors, key + ".weight", {out, in}, weight, dense_dtype());
        break;
      case WeightFormat::EXL2:
        add_exl2(tensors, key, weight, in, out,
                 formats::plan_exl2_groups(in, spec_.format.exl2_bits, 32));
        break;
      case WeightFormat::GPTQ: {
        formats::GptqQuantizeOptions options;
        options.group_size = spec_.gptq_group_size;
        if (spec_.gptq_act_order) options.act_order_seed = layout_seed(key);
        options.exact_zeros = spec_.gptq_v2;
        options.write_g_idx = true;
        add_encoded(tensors, key, formats::quantize_gptq(weight, out, in, options).tensors());
        if (bias == Bias::None) bias = Bias::Zero;
        break;
      }
    }
    add_bias(tensors, key, out, bias);
  }

  // lm_head: EXL2 at head_bits in every group, as exllamav2's converter
  // quantizes it; dense otherwise (GPTQ leaves the head in FP16).
  void add_head(Tensors& out, std::int64_t hidden, std::int64_t vocab) {
    const std::string key = "lm_head";
    if (spec_.format.kind != WeightFormat::EXL2) {
      add_dense(out, key + ".weight", {vocab, hidden}, 0.0,
                1.0 / std::sqrt(static_cast<double>(hidden)));
      return;
    }
    const std::vector<float> weight =
        draw(key + ".weight", vocab * hidden, 0.0, 1.0 / std::sqrt(static_cast<double>(hidden)));
    std::vector<formats::Exl2GroupSpec> groups(static_cast<std::size_t>(hidden / 32),
                                               {spec_.exl2_head_bits, 32});
    add_exl2(out, key, weight, hidden, vocab, std::move(groups));
  }

  const RandomModelSpec& spec_;
  std::vector<std::function<void(Tensors&)>> tasks_;
};

}  // namespace

void add_model_tensors(const RandomModelSpec& spec, io::SafetensorsWriter& writer) {
  TensorBuilder(spec).write_to(writer);
}

}  // namespace quire::engine::modelgen::detail
