#include "tensor_builder.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

#include "quire/engine/formats/awq_writer.h"
#include "quire/engine/formats/compressed_tensors_writer.h"
#include "quire/engine/formats/exl2_writer.h"
#include "quire/engine/formats/exl3_writer.h"
#include "quire/engine/formats/gptq_writer.h"
#include "quire/engine/modelgen/random_stream.h"
#include "quire/kernels/cpu/half.h"
#include "quire/kernels/fp8.h"

namespace quire::engine::modelgen::detail {
namespace {

using kernels::DType;
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

// llm-compressor's checkpoints (FP8 and the integer schemes) keep every
// tensor they do not quantize in the model's BF16.
DType dense_dtype(const RandomModelSpec& spec) {
  const WeightFormat kind = spec.format.kind;
  return kind == WeightFormat::BF16 || kind == WeightFormat::FP8 ||
                 kind == WeightFormat::FP8_TENSOR || kind == WeightFormat::W4A16 ||
                 kind == WeightFormat::W8A16 || kind == WeightFormat::INT8
             ? DType::BF16
             : DType::F16;
}

std::vector<float> draw(const RandomModelSpec& spec, const std::string& label, std::int64_t count,
                        double mean, double deviation) {
  RandomStream stream(spec.seed, label);
  std::vector<float> values(static_cast<std::size_t>(count));
  for (float& value : values)
    value = static_cast<float>(mean + deviation * stream.normal());
  return values;
}

// Values in F16, BF16 or F32.
void add_values(Tensors& out, const std::string& name, std::vector<std::int64_t> shape,
                const std::vector<float>& values, DType dtype) {
  if (dtype == DType::F32) {
    std::vector<std::byte> bytes(values.size() * 4);
    std::memcpy(bytes.data(), values.data(), bytes.size());
    out.push_back({name, dtype, std::move(shape), std::move(bytes)});
    return;
  }
  std::vector<std::byte> bytes(values.size() * 2);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::uint16_t bits = dtype == DType::BF16 ? kernels::float_to_bf16(values[i])
                                                    : kernels::float_to_half(values[i]);
    std::memcpy(bytes.data() + 2 * i, &bits, 2);
  }
  out.push_back({name, dtype, std::move(shape), std::move(bytes)});
}

void add_bias(const RandomModelSpec& spec, Tensors& tensors, const std::string& key,
              const std::string& label, std::int64_t out, Bias bias) {
  if (bias == Bias::Random) {
    add_values(tensors, key + ".bias", {out}, draw(spec, label + ".bias", out, 0.0, 0.1),
               dense_dtype(spec));
  }
  if (bias == Bias::Zero)
    add_values(tensors, key + ".bias", {out}, std::vector<float>(static_cast<std::size_t>(out)),
               DType::F16);
}

void add_encoded(Tensors& out, const std::string& key, std::vector<formats::NamedTensor> tensors) {
  for (formats::NamedTensor& tensor : tensors) {
    out.push_back({key + "." + tensor.suffix, tensor.dtype, std::move(tensor.shape),
                   std::move(tensor.bytes)});
  }
}

// A seed for the layer's permutation or act-order, from its own stream.
std::uint64_t layout_seed(const RandomModelSpec& spec, const std::string& label) {
  return RandomStream(spec.seed, label + "#layout").next();
}

void add_exl2(const RandomModelSpec& spec, Tensors& out, const std::string& key,
              const std::string& label, const std::vector<float>& weight, std::int64_t in,
              std::int64_t rows, std::vector<formats::Exl2GroupSpec> groups) {
  formats::Exl2QuantizeOptions options;
  options.groups = std::move(groups);
  options.permutation_seed = layout_seed(spec, label);
  add_encoded(out, key, formats::quantize_exl2(weight, rows, in, options).tensors());
}

// FP8 as llm-compressor quantizes it: the scale maps the largest magnitude
// of a row (or of the tensor) to E4M3's largest value; stored in BF16 per
// row ([out, 1]) or F32 for the tensor ([1]), and the codes are computed
// with the scale as stored, so that code * stored scale is the weight.
void add_fp8(Tensors& out, const std::string& key, const std::vector<float>& weight,
             std::int64_t rows, std::int64_t in, bool per_row) {
  std::vector<float> scales(static_cast<std::size_t>(per_row ? rows : 1), 0.0f);
  for (std::int64_t n = 0; n < rows; ++n) {
    float& scale = scales[static_cast<std::size_t>(per_row ? n : 0)];
    for (std::int64_t k = 0; k < in; ++k)
      scale = std::max(scale, std::fabs(weight[static_cast<std::size_t>(n * in + k)]));
  }
  for (float& scale : scales) {
    scale = std::max(scale, 1e-12f) / kernels::kE4m3Max;
    if (per_row) scale = kernels::bf16_to_float(kernels::float_to_bf16(scale));
  }
  std::vector<std::byte> codes(static_cast<std::size_t>(rows * in));
  for (std::int64_t n = 0; n < rows; ++n) {
    const float scale = scales[static_cast<std::size_t>(per_row ? n : 0)];
    for (std::int64_t k = 0; k < in; ++k) {
      const auto i = static_cast<std::size_t>(n * in + k);
      codes[i] = static_cast<std::byte>(kernels::float_to_e4m3(weight[i] / scale));
    }
  }
  out.push_back({key + ".weight", DType::F8_E4M3, {rows, in}, std::move(codes)});
  if (per_row) {
    add_values(out, key + ".weight_scale", {rows, 1}, scales, DType::BF16);
  } else {
    add_values(out, key + ".weight_scale", {1}, scales, DType::F32);
  }
}

// EXL3 as exllamav3's converter leaves it: a whole number of bits per
// tensor (the two around a fractional mean, mixed by the tensor's own draw),
// random trellis symbols, and the bias in FP16, padded like the outputs.
int exl3_tensor_bits(const RandomModelSpec& spec, const std::string& label) {
  const double mean = spec.format.exl3_bits;
  const double below = std::floor(mean);
  const double share_above = mean - below;
  const bool above = RandomStream(spec.seed, label + "#bits").uniform() < share_above;
  return std::clamp(static_cast<int>(below) + (above ? 1 : 0), 1, 8);
}

void add_exl3(const RandomModelSpec& spec, Tensors& out, const std::string& key,
              const std::string& label, std::int64_t in, std::int64_t rows, int bits, Bias bias) {
  formats::Exl3RandomOptions options;
  options.bits = bits;
  options.codebook = spec.format.exl3_codebook;
  options.deviation = 1.0 / std::sqrt(static_cast<double>(in));
  options.seed = layout_seed(spec, label);
  const formats::Exl3Encoding encoding = formats::random_exl3(rows, in, options);
  add_encoded(out, key, encoding.tensors());
  if (bias == Bias::None) return;
  std::vector<float> values(static_cast<std::size_t>(encoding.padded_out), 0.0f);
  if (bias == Bias::Random) {
    const std::vector<float> drawn = draw(spec, label + ".bias", rows, 0.0, 0.1);
    std::copy(drawn.begin(), drawn.end(), values.begin());
  }
  add_values(out, key + ".bias", {encoding.padded_out}, values, DType::F16);
}

void add_linear(const RandomModelSpec& spec, Tensors& tensors, const std::string& key,
                const std::string& label, std::int64_t in, std::int64_t out, Bias bias) {
  if (spec.format.kind == WeightFormat::EXL3) {
    add_exl3(spec, tensors, key, label, in, out, exl3_tensor_bits(spec, label), bias);
    return;
  }
  const std::vector<float> weight =
      draw(spec, label + ".weight", out * in, 0.0, 1.0 / std::sqrt(static_cast<double>(in)));
  switch (spec.format.kind) {
    case WeightFormat::FP16:
    case WeightFormat::BF16:
      add_values(tensors, key + ".weight", {out, in}, weight, dense_dtype(spec));
      break;
    case WeightFormat::EXL2:
      add_exl2(spec, tensors, key, label, weight, in, out,
               formats::plan_exl2_groups(in, spec.format.exl2_bits, 32));
      break;
    case WeightFormat::GPTQ: {
      formats::GptqQuantizeOptions options;
      options.bits = spec.format.gptq_bits;
      options.group_size = spec.gptq_group_size;
      if (spec.gptq_act_order) options.act_order_seed = layout_seed(spec, label);
      options.exact_zeros = spec.gptq_v2;
      options.write_g_idx = true;
      add_encoded(tensors, key, formats::quantize_gptq(weight, out, in, options).tensors());
      // GPTQ tools write a (zero) bias on every projection, whatever the architecture.
      if (bias == Bias::None) bias = Bias::Zero;
      break;
    }
    case WeightFormat::FP8:
    case WeightFormat::FP8_TENSOR:
      add_fp8(tensors, key, weight, out, in, spec.format.kind == WeightFormat::FP8);
      break;
    case WeightFormat::W4A16:
    case WeightFormat::W8A16:
    case WeightFormat::INT8: {
      formats::IntQuantizeOptions options;
      options.bits = spec.format.kind == WeightFormat::W4A16 ? 4 : 8;
      options.symmetric = !spec.format.zero_points;
      options.group_size = spec.resolved_group_size();
      if (spec.actorder) options.actorder_seed = layout_seed(spec, label);
      options.scale_dtype = DType::BF16;
      add_encoded(tensors, key,
                  spec.format.kind == WeightFormat::INT8
                      ? formats::quantize_naive_int8(weight, out, in, options)
                      : formats::quantize_pack_quantized(weight, out, in, options));
      break;
    }
    case WeightFormat::AWQ: {
      const int group = spec.resolved_group_size();
      add_encoded(tensors, key, formats::quantize_awq(weight, out, in, {group == 0 ? -1 : group}));
      break;
    }
    case WeightFormat::EXL3:
      break;
  }
  add_bias(spec, tensors, key, label, out, bias);
}

void add_head(const RandomModelSpec& spec, Tensors& out, const std::string& key,
              const std::string& label, std::int64_t hidden, std::int64_t vocab) {
  const double deviation = 1.0 / std::sqrt(static_cast<double>(hidden));
  if (spec.format.kind == WeightFormat::EXL3 && spec.exl3_head_bits != 16) {
    add_exl3(spec, out, key, label, hidden, vocab, spec.exl3_head_bits, Bias::None);
    return;
  }
  if (spec.format.kind != WeightFormat::EXL2) {
    add_values(out, key + ".weight", {vocab, hidden},
               draw(spec, label + ".weight", vocab * hidden, 0.0, deviation), dense_dtype(spec));
    return;
  }
  const std::vector<float> weight = draw(spec, label + ".weight", vocab * hidden, 0.0, deviation);
  std::vector<formats::Exl2GroupSpec> groups(static_cast<std::size_t>(hidden / 32),
                                             {spec.exl2_head_bits, 32});
  add_exl2(spec, out, key, label, weight, hidden, vocab, std::move(groups));
}

}  // namespace

void TensorBuilder::dense(const std::string& name, std::vector<std::int64_t> shape, double mean,
                          double deviation, const std::string& label) {
  later([=, this](Tensors& out) {
    std::int64_t count = 1;
    for (const std::int64_t dim : shape)
      count *= dim;
    add_values(out, name, shape, draw(spec_, label.empty() ? name : label, count, mean, deviation),
               dense_dtype(spec_));
  });
}

void TensorBuilder::linear(const std::string& key, std::int64_t in, std::int64_t out, Bias bias,
                           const std::string& label) {
  later([=, this](Tensors& tensors) {
    add_linear(spec_, tensors, key, label.empty() ? key : label, in, out, bias);
  });
}

void TensorBuilder::head(const std::string& key, std::int64_t hidden, std::int64_t vocab,
                         const std::string& label) {
  later([=, this](Tensors& out) {
    add_head(spec_, out, key, label.empty() ? key : label, hidden, vocab);
  });
}

void TensorBuilder::write_to(io::SafetensorsWriter& writer) {
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

void add_model_tensors(const RandomModelSpec& spec, io::SafetensorsWriter& writer) {
  TensorBuilder builder(spec);
  plan_model(builder);
  builder.write_to(writer);
}

int planned_weights(const RandomModelSpec& spec) {
  TensorBuilder builder(spec);
  plan_model(builder);
  return builder.queued();
}

}  // namespace quire::engine::modelgen::detail
