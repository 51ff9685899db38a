#include "quantize_support.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <tuple>

#include "cli_support.h"
#include "quire/engine/model_error.h"
#include "quire/kernels/cpu/half.h"

namespace quire::cli {
namespace {

namespace fs = std::filesystem;
namespace io = engine::io;
using kernels::DType;

std::tuple<int, long, int, std::string> order_key(const std::string& name) {
  static const std::array<const char*, 9> kInLayer{
      "input_layernorm",  "self_attn.q_proj", "self_attn.k_proj",
      "self_attn.v_proj", "self_attn.o_proj", "post_attention_layernorm",
      "mlp.gate_proj",    "mlp.up_proj",      "mlp.down_proj"};
  if (name.starts_with("model.embed_tokens.")) return {0, 0, 0, name};
  if (const auto split = split_layer_name(name)) {
    const std::string& rest = split->second;
    int rank = static_cast<int>(kInLayer.size());
    for (std::size_t i = 0; i < kInLayer.size(); ++i) {
      if (rest.starts_with(std::string(kInLayer[i]) + ".")) rank = static_cast<int>(i);
    }
    return {1, split->first, rank, name};
  }
  if (name.starts_with("lm_head.")) return {3, 0, 0, name};
  return {2, 0, 0, name};
}

// A fresh hidden sibling of the target, so that the finished model can be
// renamed into place and a failed run leaves nothing behind.
fs::path make_staging_directory(const fs::path& target) {
  std::random_device entropy;
  for (int attempt = 0; attempt < 16; ++attempt) {
    const fs::path staging =
        target.parent_path() / ("." + target.filename().string() + ".partial-" +
                                std::to_string(entropy() % 1'000'000'000u));
    if (fs::create_directory(staging)) return staging;
  }
  throw std::runtime_error("cannot create a staging directory next to " + target.string());
}

}  // namespace

// Parsed by hand rather than with std::regex, whose GCC 12 implementation
// trips -Wmaybe-uninitialized under the sanitizer build.
std::optional<std::pair<long, std::string>> split_layer_name(const std::string& name) {
  static constexpr std::string_view kPrefix = "model.layers.";
  if (!name.starts_with(kPrefix)) return std::nullopt;
  std::size_t pos = kPrefix.size();
  const std::size_t digits_begin = pos;
  while (pos < name.size() && name[pos] >= '0' && name[pos] <= '9')
    ++pos;
  if (pos == digits_begin || pos >= name.size() || name[pos] != '.') return std::nullopt;
  return std::make_pair(std::stol(name.substr(digits_begin, pos - digits_begin)),
                        name.substr(pos + 1));
}

bool is_layer_linear(const std::string& name) {
  static const std::array<std::string_view, 7> kLinear{
      "self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight",
      "self_attn.o_proj.weight", "mlp.gate_proj.weight",    "mlp.up_proj.weight",
      "mlp.down_proj.weight"};
  const auto split = split_layer_name(name);
  if (!split) return false;
  return std::find(kLinear.begin(), kLinear.end(), split->second) != kLinear.end();
}

std::vector<std::string> ordered_tensor_names(const io::ModelTensors& tensors) {
  std::vector<std::string> names;
  for (const std::string_view name : tensors.names())
    names.emplace_back(name);
  std::sort(names.begin(), names.end(),
            [](const std::string& a, const std::string& b) { return order_key(a) < order_key(b); });
  return names;
}

std::vector<float> tensor_floats(const io::ModelTensors& tensors, const std::string& name) {
  const io::TensorInfo& info = *tensors.get(name).info;
  if (info.dtype != DType::F16 && info.dtype != DType::BF16 && info.dtype != DType::F32) {
    throw UsageError("IN: tensor " + name + " is " + std::string(kernels::dtype_name(info.dtype)) +
                     "; quantize a model whose weights are FP16 or BF16");
  }
  const std::span<const std::byte> bytes = tensors.data(name);
  std::vector<float> values(static_cast<std::size_t>(info.elements()));
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (info.dtype == DType::F32) {
      std::memcpy(&values[i], bytes.data() + 4 * i, 4);
      continue;
    }
    std::uint16_t bits = 0;
    std::memcpy(&bits, bytes.data() + 2 * i, 2);
    values[i] =
        info.dtype == DType::BF16 ? kernels::bf16_to_float(bits) : kernels::half_to_float(bits);
  }
  return values;
}

std::vector<std::byte> to_half_bytes(const std::vector<float>& values) {
  std::vector<std::byte> bytes(values.size() * 2);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::uint16_t bits = kernels::float_to_half(values[i]);
    std::memcpy(bytes.data() + 2 * i, &bits, 2);
  }
  return bytes;
}

std::string read_file_text(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw engine::ModelError("cannot read " + path.string());
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

void write_file_text(const fs::path& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(text.data(), static_cast<std::streamsize>(text.size()));
  file.close();
  if (!file) {
    throw std::system_error(errno, std::generic_category(), "cannot write " + path.string());
  }
}

fs::path checked_target(const std::string& out) {
  fs::path target = fs::absolute(fs::path(out)).lexically_normal();
  if (!target.has_filename()) target = target.parent_path();
  std::error_code error;
  const fs::file_status status = fs::status(target, error);
  if (!fs::exists(status)) return target;
  if (!fs::is_directory(status)) throw UsageError("OUT: " + out + " exists and is not a directory");
  if (!fs::is_empty(target)) {
    throw UsageError("OUT: " + out + " is not empty; choose a new or empty directory");
  }
  return target;
}

void write_model_directory(const fs::path& in, const fs::path& target,
                           const std::function<void(const fs::path&)>& write) {
  fs::create_directories(target.parent_path());
  const fs::path staging = make_staging_directory(target);
  try {
    write(staging);
    for (const fs::directory_entry& entry : fs::directory_iterator(in)) {
      if (!entry.is_regular_file()) continue;
      const std::string name = entry.path().filename().string();
      if (name == "config.json" || name.ends_with(".safetensors") ||
          name == io::ModelTensors::kIndexFileName || fs::exists(staging / name)) {
        continue;
      }
      fs::copy_file(entry.path(), staging / name);
    }
    fs::rename(staging, target);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(staging, ignored);
    throw;
  }
}

}  // namespace quire::cli
