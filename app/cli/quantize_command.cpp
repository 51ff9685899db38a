// quire-cli quantize: an FP16/BF16 model directory to EXL2, written by Quire's
// own EXL2 writer (round-to-nearest, no calibration data).

#include "quantize_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include "cli_support.h"
#include "quire/engine/formats/exl2_writer.h"
#include "quire/engine/io/model_tensors.h"
#include "quire/engine/io/safetensors_writer.h"
#include "quire/engine/model/model_config.h"
#include "quire/engine/model_error.h"
#include "quire/engine/modelgen/random_stream.h"
#include "quire/kernels/cpu/half.h"

namespace quire::cli {
namespace {

namespace fs = std::filesystem;
namespace formats = engine::formats;
namespace io = engine::io;
using kernels::DType;

struct Settings {
  double bits = 0.0;
  int head_bits = 6;
  int group_size = 32;
  std::uint64_t seed = 1;
};

template <typename T>
T parse_number(const std::string& option, const std::string& text, const char* what) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end) {
    throw UsageError(option + ": \"" + text + "\" is not " + what);
  }
  return value;
}

Settings settings_from(const QuantizeArguments& a) {
  Settings settings;
  constexpr std::string_view kPrefix = "exl2:";
  if (!a.format.starts_with(kPrefix)) {
    throw UsageError("--format: \"" + a.format + "\" is not exl2:BITS (for example exl2:4.0)");
  }
  settings.bits = parse_number<double>("--format", a.format.substr(kPrefix.size()), "a number");
  if (!(settings.bits >= 2.0 && settings.bits <= 8.0)) {
    throw UsageError("--format: " + a.format + " is outside exl2:2.0 to exl2:8.0");
  }
  if (a.head_bits) {
    settings.head_bits = parse_number<int>("--head-bits", *a.head_bits, "an integer");
    constexpr std::array kWidths{2, 3, 4, 5, 6, 8};
    if (std::find(kWidths.begin(), kWidths.end(), settings.head_bits) == kWidths.end()) {
      throw UsageError("--head-bits: " + *a.head_bits + " is not one of 2, 3, 4, 5, 6, 8");
    }
  }
  if (a.group_size) {
    settings.group_size = parse_number<int>("--group-size", *a.group_size, "an integer");
    if (settings.group_size <= 0 || settings.group_size % 32 != 0) {
      throw UsageError("--group-size: " + *a.group_size + " is not a positive multiple of 32");
    }
  }
  if (a.seed)
    settings.seed = parse_number<std::uint64_t>("--seed", *a.seed, "a non-negative integer");
  return settings;
}

// "model.layers.<index>.<rest>" split into its layer index and the rest;
// nothing for any other name. Parsed by hand rather than with std::regex, whose
// GCC 12 implementation trips -Wmaybe-uninitialized under the sanitizer build.
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

// The linear layers of a decoder layer, which EXL2 quantizes; everything else
// (embeddings, norms, biases) stays FP16 as exllamav2's converter leaves it.
bool is_layer_linear(const std::string& name) {
  static const std::array<std::string_view, 7> kLinear{
      "self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight",
      "self_attn.o_proj.weight", "mlp.gate_proj.weight",    "mlp.up_proj.weight",
      "mlp.down_proj.weight"};
  const auto split = split_layer_name(name);
  if (!split) return false;
  return std::find(kLinear.begin(), kLinear.end(), split->second) != kLinear.end();
}

// Tensors in the order a reader lists them: embeddings, layer by layer (each
// in the order of its computation), the final norm, the head.
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

std::vector<float> to_floats(const io::TensorInfo& info, std::span<const std::byte> bytes) {
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

std::string read_text(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw engine::ModelError("cannot read " + path.string());
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(text.data(), static_cast<std::streamsize>(text.size()));
  file.close();
  if (!file) {
    throw std::system_error(errno, std::generic_category(), "cannot write " + path.string());
  }
}

// The directory itself, without a trailing separator ("out/" -> "out").
fs::path target_of(const std::string& out) {
  fs::path target = fs::absolute(fs::path(out)).lexically_normal();
  if (!target.has_filename()) target = target.parent_path();
  return target;
}

void check_target(const std::string& out, const fs::path& target) {
  std::error_code error;
  const fs::file_status status = fs::status(target, error);
  if (!fs::exists(status)) return;
  if (!fs::is_directory(status)) throw UsageError("OUT: " + out + " exists and is not a directory");
  if (!fs::is_empty(target)) {
    throw UsageError("OUT: " + out + " is not empty; choose a new or empty directory");
  }
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

struct Summary {
  int linear_layers = 0;
  bool head_quantized = false;
  double quantized_bits = 0.0;  // over every quantized weight
  double quantized_weights = 0.0;
  std::size_t tensors = 0;
};

void add_exl2(io::SafetensorsWriter& writer, const std::string& key,
              const std::vector<float>& weight, std::int64_t out_features, std::int64_t in_features,
              std::vector<formats::Exl2GroupSpec> groups, std::uint64_t seed, Summary& summary) {
  const double bits = formats::plan_bits_per_weight(groups);
  formats::Exl2QuantizeOptions options;
  options.groups = std::move(groups);
  // The permutation depends only on the seed and the layer's name, as in
  // make-model, so the same input gives the same file.
  options.permutation_seed = engine::modelgen::RandomStream(seed, key + "#layout").next();
  formats::Exl2Encoding encoding =
      formats::quantize_exl2(weight, out_features, in_features, options);
  for (formats::NamedTensor& tensor : encoding.tensors()) {
    writer.add(key + "." + tensor.suffix, tensor.dtype, std::move(tensor.shape),
               std::move(tensor.bytes));
  }
  summary.quantized_bits += bits * double(out_features * in_features);
  summary.quantized_weights += double(out_features * in_features);
}

Summary add_tensors(const io::ModelTensors& tensors, const engine::ModelConfig& config,
                    const Settings& settings, io::SafetensorsWriter& writer) {
  std::vector<std::string> names;
  for (const std::string_view name : tensors.names())
    names.emplace_back(name);
  std::sort(names.begin(), names.end(),
            [](const std::string& a, const std::string& b) { return order_key(a) < order_key(b); });

  Summary summary;
  for (const std::string& name : names) {
    const io::ModelTensors::Located located = tensors.get(name);
    const io::TensorInfo& info = *located.info;
    if (info.dtype != DType::F16 && info.dtype != DType::BF16 && info.dtype != DType::F32) {
      throw UsageError("IN: tensor " + name + " is " +
                       std::string(kernels::dtype_name(info.dtype)) +
                       "; quantize a model whose weights are FP16 or BF16");
    }
    const std::vector<float> values = to_floats(info, tensors.data(name));
    const bool layer_linear = is_layer_linear(name);
    const bool head = name == "lm_head.weight";
    if (head && config.tie_word_embeddings) continue;  // the embeddings serve as the head
    if ((layer_linear || head) && info.shape.size() != 2) {
      throw UsageError("IN: tensor " + name + " has shape " + io::format_shape(info.shape) +
                       ", not [out, in]");
    }
    if (layer_linear || head) {
      const std::int64_t out_features = info.shape[0];
      const std::int64_t in_features = info.shape[1];
      if (in_features % 32 != 0) {
        throw UsageError("IN: tensor " + name + " has " + std::to_string(in_features) +
                         " inputs; EXL2 needs a multiple of 32");
      }
      const std::string key = name.substr(0, name.size() - std::string_view(".weight").size());
      std::vector<formats::Exl2GroupSpec> groups =
          layer_linear ? formats::plan_exl2_groups(in_features, settings.bits, settings.group_size)
                       // The head at one width in every group, as exllamav2's converter does.
                       : std::vector<formats::Exl2GroupSpec>(
                             static_cast<std::size_t>(in_features / 32), {settings.head_bits, 32});
      add_exl2(writer, key, values, out_features, in_features, std::move(groups), settings.seed,
               summary);
      if (layer_linear) ++summary.linear_layers;
      summary.head_quantized = summary.head_quantized || head;
      continue;
    }
    writer.add(name, DType::F16, info.shape, to_half_bytes(values));
  }
  summary.tensors = writer.size();
  return summary;
}

std::string quantized_config(const fs::path& in, const Settings& settings) {
  const fs::path path = in / "config.json";
  nlohmann::ordered_json config = nlohmann::ordered_json::parse(read_text(path), nullptr, false);
  if (config.is_discarded() || !config.is_object()) {
    throw engine::ModelError(path.string() + " is not a JSON object");
  }
  config["torch_dtype"] = "float16";
  config["quantization_config"] = {
      {"quant_method", "exl2"}, {"bits", settings.bits}, {"head_bits", settings.head_bits}};
  return config.dump(2) + "\n";
}

// Everything but the weights and config.json: tokenizer files, generation
// and tokenizer configuration, a README or license that came with the model.
void copy_other_files(const fs::path& in, const fs::path& staging) {
  for (const fs::directory_entry& entry : fs::directory_iterator(in)) {
    if (!entry.is_regular_file()) continue;
    const std::string name = entry.path().filename().string();
    if (name == "config.json" || name.ends_with(".safetensors") ||
        name == io::ModelTensors::kIndexFileName) {
      continue;
    }
    fs::copy_file(entry.path(), staging / name);
  }
}

}  // namespace

int run_quantize(const QuantizeArguments& arguments, std::ostream& out, std::ostream& err) {
  constexpr const char* kPrefix = "quire-cli quantize: ";
  try {
    if (arguments.in.empty() || arguments.out.empty()) {
      throw UsageError("IN and OUT are required: quire-cli quantize IN OUT --format exl2:BITS");
    }
    const Settings settings = settings_from(arguments);
    const fs::path in(arguments.in);
    if (!fs::is_directory(in)) throw UsageError("IN: " + arguments.in + " is not a directory");
    const engine::ModelConfig config = engine::load_model_config(in);
    if (!config.quantization.method.empty()) {
      throw UsageError("IN: " + arguments.in + " is already quantized (" +
                       config.quantization.method + "); start from its FP16 or BF16 weights");
    }
    const fs::path target = target_of(arguments.out);
    check_target(arguments.out, target);
    const io::ModelTensors tensors = io::ModelTensors::open(in);

    io::SafetensorsWriter writer;
    writer.set_metadata("format", "pt");
    const Summary summary = add_tensors(tensors, config, settings, writer);
    if (summary.linear_layers == 0) {
      throw UsageError("IN: " + arguments.in +
                       " has no model.layers.N.*_proj.weight tensors to quantize");
    }

    fs::create_directories(target.parent_path());
    const fs::path staging = make_staging_directory(target);
    try {
      write_text(staging / "config.json", quantized_config(in, settings));
      copy_other_files(in, staging);
      writer.write(staging / io::ModelTensors::kSingleFileName);
      fs::rename(staging, target);
    } catch (...) {
      std::error_code ignored;
      fs::remove_all(staging, ignored);
      throw;
    }

    std::uint64_t bytes = 0;
    int files = 0;
    for (const fs::directory_entry& entry : fs::directory_iterator(target)) {
      bytes += entry.file_size();
      ++files;
    }
    char bits[32];
    std::snprintf(bits, sizeof(bits), "%.2f", summary.quantized_bits / summary.quantized_weights);
    out << "wrote " << arguments.out << " (" << arguments.format << ", " << summary.linear_layers
        << " linear layers"
        << (summary.head_quantized
                ? " and the head at " + std::to_string(settings.head_bits) + " bits"
                : std::string())
        << ", " << bits << " bits per quantized weight): " << files << " files, " << summary.tensors
        << " tensors, " << bytes << " bytes (" << human_bytes(static_cast<std::int64_t>(bytes))
        << ")\n";
    return 0;
  } catch (const UsageError& error) {
    err << kPrefix << error.what() << '\n';
    return 2;
  } catch (const engine::ModelError& error) {
    err << kPrefix << error.what() << '\n';
    return 2;
  } catch (const std::invalid_argument& error) {
    err << kPrefix << error.what() << '\n';
    return 2;
  } catch (const std::exception& error) {
    err << kPrefix << error.what() << '\n';
    return 1;
  }
}

void add_quantize_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<QuantizeArguments>();
  CLI::App* command = app.add_subcommand(
      "quantize", "Quantize an FP16/BF16 model directory to EXL2 with Quire's own writer");
  command->add_option("IN", a->in, "FP16 or BF16 model directory")->type_name("DIR");
  command->add_option("OUT", a->out, "Directory to create (new or empty)")->type_name("DIR");
  command->add_option("--format", a->format, "exl2:BITS, 2.0 to 8.0 bits per weight")
      ->type_name("FORMAT")
      ->required();
  command
      ->add_option("--head-bits", a->head_bits,
                   "Width of an untied head: 2, 3, 4, 5, 6 or 8 (default 6)")
      ->type_name("N");
  command->add_option("--group-size", a->group_size, "Rows per EXL2 group (default 32)")
      ->type_name("N");
  command->add_option("--seed", a->seed, "Seed of the act-order permutations (default 1)")
      ->type_name("N");
  command->callback([a, &exit_code] { exit_code = run_quantize(*a, std::cout, std::cerr); });
}

}  // namespace quire::cli
