// quire-cli quantize: an FP16/BF16 model directory to EXL2, written by Quire's
// own EXL2 writer (round-to-nearest, no calibration data), to EXL3 with
// Quire's own trellis quantizer (quantize_exl3.cpp), or to compressed-tensors'
// W4A16 / W8A16 (quantize_integer.cpp).

#include "quantize_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "cli_support.h"
#include "quantize_exl3.h"
#include "quantize_integer.h"
#include "quantize_support.h"
#include "quire/engine/formats/exl2_writer.h"
#include "quire/engine/io/model_tensors.h"
#include "quire/engine/io/safetensors_writer.h"
#include "quire/engine/model/model_config.h"
#include "quire/engine/model_error.h"
#include "quire/engine/modelgen/exl3_config.h"
#include "quire/engine/modelgen/random_stream.h"

namespace quire::cli {
namespace {

namespace fs = std::filesystem;
namespace formats = engine::formats;
namespace io = engine::io;
using kernels::DType;

struct Exl2Settings {
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

void refuse(const std::optional<std::string>& option, const char* name, const char* format) {
  if (option) throw UsageError(std::string(name) + " applies to " + format + " only");
}

Exl2Settings exl2_settings(const QuantizeArguments& a) {
  Exl2Settings settings;
  refuse(a.calibration, "--calibration", "exl3, w4a16 and w8a16");
  refuse(a.calibration_tokens, "--calibration-tokens", "exl3, w4a16 and w8a16");
  if (a.actorder) throw UsageError("--actorder applies to w4a16 and w8a16 only");
  refuse(a.out_scales, "--out-scales", "exl3");
  refuse(a.threads, "--threads", "exl3");
  settings.bits = parse_number<double>("--format", a.format.substr(5), "a number");
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

// exl3:BITS[:CODEBOOK]
// --calibration and --calibration-tokens.
CalibrationText calibration_text(const QuantizeArguments& a) {
  CalibrationText text;
  if (a.calibration) {
    if (!fs::is_regular_file(*a.calibration)) {
      throw UsageError("--calibration: " + *a.calibration + " is not a readable file");
    }
    text.path = *a.calibration;
  }
  if (a.calibration_tokens) {
    if (!a.calibration) throw UsageError("--calibration-tokens needs --calibration");
    text.tokens =
        parse_number<std::int64_t>("--calibration-tokens", *a.calibration_tokens, "an integer");
    if (text.tokens < 16) {
      throw UsageError("--calibration-tokens: " + *a.calibration_tokens + " is fewer than 16");
    }
  }
  return text;
}

// llm-compressor's preset names: w4a16 (symmetric), w4a16-asym (W4A16_ASYM;
// either spelling), w8a16.
IntegerSettings integer_settings(const QuantizeArguments& a) {
  IntegerSettings settings;
  refuse(a.head_bits, "--head-bits", "exl2 and exl3 (the head stays FP16)");
  refuse(a.seed, "--seed", "exl2 and exl3");
  refuse(a.out_scales, "--out-scales", "exl3");
  refuse(a.threads, "--threads", "exl3");
  std::string scheme = a.format;
  std::transform(scheme.begin(), scheme.end(), scheme.begin(), [](unsigned char c) {
    return c == '-' ? '_' : static_cast<char>(std::tolower(c));
  });
  if (scheme == "w4a16") {
    settings.bits = 4;
  } else if (scheme == "w4a16_asym") {
    settings.bits = 4;
    settings.symmetric = false;
  } else if (scheme == "w8a16") {
    settings.bits = 8;
  } else {
    throw UsageError("--format: \"" + a.format + "\" is not w4a16, w4a16-asym or w8a16");
  }
  if (a.group_size) {
    settings.group_size = *a.group_size == "channel"
                              ? 0
                              : parse_number<int>("--group-size", *a.group_size, "an integer");
    if (settings.group_size < 0 || settings.group_size % 8 != 0) {
      throw UsageError("--group-size: " + *a.group_size +
                       " is not a positive multiple of 8 or \"channel\"");
    }
  }
  settings.calibration = calibration_text(a);
  settings.actorder = a.actorder;
  if (settings.actorder && settings.calibration.path.empty()) {
    throw UsageError("--actorder orders inputs by their calibration power; it needs --calibration");
  }
  if (settings.actorder && settings.group_size == 0) {
    throw UsageError("--actorder forms groups; it does not apply to --group-size channel");
  }
  return settings;
}

Exl3Settings exl3_settings(const QuantizeArguments& a) {
  Exl3Settings settings;
  refuse(a.group_size, "--group-size", "exl2, w4a16 and w8a16");
  if (a.actorder) throw UsageError("--actorder applies to w4a16 and w8a16 only");
  std::string bits = a.format.substr(5);
  if (const std::size_t colon = bits.find(':'); colon != std::string::npos) {
    const std::string codebook = bits.substr(colon + 1);
    bits.resize(colon);
    if (codebook == "mul1") {
      settings.codebook = kernels::Exl3Codebook::mul1;
    } else if (codebook == "mcg") {
      settings.codebook = kernels::Exl3Codebook::mcg;
    } else if (codebook == "3inst") {
      settings.codebook = kernels::Exl3Codebook::three_inst;
    } else {
      throw UsageError("--format: \"" + codebook +
                       "\" is not an EXL3 codebook; use mul1 (the default), mcg or 3inst");
    }
  }
  settings.bits = parse_number<double>("--format", bits, "a number");
  if (!(settings.bits >= 1.0 && settings.bits <= 8.0)) {
    throw UsageError("--format: " + a.format + " is outside exl3:1.0 to exl3:8.0");
  }
  if (a.head_bits) {
    settings.head_bits = parse_number<int>("--head-bits", *a.head_bits, "an integer");
    if ((settings.head_bits < 1 || settings.head_bits > 8) && settings.head_bits != 16) {
      throw UsageError("--head-bits: " + *a.head_bits + " is not 1 to 8, or 16 (FP16)");
    }
  }
  if (a.seed)
    settings.seed = parse_number<std::uint64_t>("--seed", *a.seed, "a non-negative integer");
  const CalibrationText text = calibration_text(a);
  settings.calibration = text.path;
  settings.calibration_tokens = text.tokens;
  if (a.out_scales) {
    const std::string& mode = *a.out_scales;
    if (mode == "auto") {
      settings.out_scales = formats::Exl3OutScales::automatic;
    } else if (mode == "always") {
      settings.out_scales = formats::Exl3OutScales::always;
    } else if (mode == "never") {
      settings.out_scales = formats::Exl3OutScales::never;
    } else {
      throw UsageError("--out-scales: \"" + mode + "\" is not auto, always or never");
    }
  }
  if (a.threads) {
    settings.threads = parse_number<int>("--threads", *a.threads, "an integer");
    if (settings.threads < 0) throw UsageError("--threads: " + *a.threads + " is negative");
  }
  return settings;
}

void add_exl2(io::SafetensorsWriter& writer, const std::string& key,
              const std::vector<float>& weight, std::int64_t out_features, std::int64_t in_features,
              std::vector<formats::Exl2GroupSpec> groups, std::uint64_t seed,
              QuantizeSummary& summary) {
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

QuantizeSummary add_exl2_tensors(const io::ModelTensors& tensors, const engine::ModelConfig& config,
                                 const Exl2Settings& settings, io::SafetensorsWriter& writer) {
  QuantizeSummary summary;
  for (const std::string& name : ordered_tensor_names(tensors)) {
    const io::TensorInfo& info = *tensors.get(name).info;
    const std::vector<float> values = tensor_floats(tensors, name);
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

// config.json with the model's quantization_config in place of any other.
std::string quantized_config(const fs::path& in, const nlohmann::ordered_json& quantization) {
  const fs::path path = in / "config.json";
  nlohmann::ordered_json config =
      nlohmann::ordered_json::parse(read_file_text(path), nullptr, false);
  if (config.is_discarded() || !config.is_object()) {
    throw engine::ModelError(path.string() + " is not a JSON object");
  }
  config["torch_dtype"] = "float16";
  config["quantization_config"] = quantization;
  return config.dump(2) + "\n";
}

std::string bits_text(double bits) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f", bits);
  return text;
}

}  // namespace

int run_quantize(const QuantizeArguments& arguments, std::ostream& out, std::ostream& err) {
  constexpr const char* kPrefix = "quire-cli quantize: ";
  try {
    if (arguments.in.empty() || arguments.out.empty()) {
      throw UsageError("IN and OUT are required: quire-cli quantize IN OUT --format exl2:BITS");
    }
    const bool exl3 = arguments.format.starts_with("exl3:");
    const bool integer = !exl3 && !arguments.format.starts_with("exl2:");
    Exl2Settings exl2;
    Exl3Settings exl3_options;
    IntegerSettings integer_options;
    if (exl3) {
      exl3_options = exl3_settings(arguments);
    } else if (integer) {
      if (!arguments.format.starts_with("w") && !arguments.format.starts_with("W")) {
        throw UsageError("--format: \"" + arguments.format +
                         "\" is not exl2:BITS, exl3:BITS[:CODEBOOK] (for example exl3:4.0), "
                         "w4a16, w4a16-asym or w8a16");
      }
      integer_options = integer_settings(arguments);
    } else {
      exl2 = exl2_settings(arguments);
    }
    const fs::path in(arguments.in);
    if (!fs::is_directory(in)) throw UsageError("IN: " + arguments.in + " is not a directory");
    const engine::ModelConfig config = engine::load_model_config(in);
    if (!config.quantization.method.empty()) {
      throw UsageError("IN: " + arguments.in + " is already quantized (" +
                       config.quantization.method + "); start from its FP16 or BF16 weights");
    }
    const fs::path target = checked_target(arguments.out);
    const io::ModelTensors tensors = io::ModelTensors::open(in);

    io::SafetensorsWriter writer;
    writer.set_metadata("format", "pt");
    QuantizeSummary summary;
    std::string config_text, storage_text, details;
    if (exl3) {
      const Exl3Written written = add_exl3_tensors(in, tensors, config, exl3_options, writer, err);
      summary = written.summary;
      config_text =
          quantized_config(in, nlohmann::ordered_json::parse(
                                   engine::modelgen::exl3_quantization_config(written.config)));
      storage_text =
          engine::modelgen::exl3_quantization_config_file(written.config, writer.listing());
      if (written.calibration_tokens > 0) {
        details = ", calibrated on " + std::to_string(written.calibration_tokens) + " tokens";
      }
    } else if (integer) {
      const IntegerWritten written = add_integer_tensors(in, tensors, integer_options, writer, err);
      summary = written.summary;
      config_text =
          quantized_config(in, nlohmann::ordered_json::parse(written.quantization_config));
      if (written.calibration_tokens > 0) {
        details = ", GPTQ on " + std::to_string(written.calibration_tokens) + " tokens";
      }
    } else {
      summary = add_exl2_tensors(tensors, config, exl2, writer);
      config_text = quantized_config(
          in, {{"quant_method", "exl2"}, {"bits", exl2.bits}, {"head_bits", exl2.head_bits}});
    }
    if (summary.linear_layers == 0) {
      throw UsageError("IN: " + arguments.in +
                       " has no model.layers.N.*_proj.weight tensors to quantize");
    }
    write_model_directory(in, target, [&](const fs::path& staging) {
      write_file_text(staging / "config.json", config_text);
      if (!storage_text.empty())
        write_file_text(staging / "quantization_config.json", storage_text);
      writer.write(staging / io::ModelTensors::kSingleFileName);
    });

    std::uint64_t bytes = 0;
    int files = 0;
    for (const fs::directory_entry& entry : fs::directory_iterator(target)) {
      bytes += entry.file_size();
      ++files;
    }
    const int head_bits = exl3 ? exl3_options.head_bits : exl2.head_bits;
    std::string format_text = arguments.format;
    if (integer) {
      format_text += integer_options.group_size == 0
                         ? ", a scale per output"
                         : ", groups of " + std::to_string(integer_options.group_size);
      if (integer_options.actorder) format_text += " in activation order";
    }
    out << "wrote " << arguments.out << " (" << format_text << ", " << summary.linear_layers
        << " linear layers"
        << (summary.head_quantized ? " and the head at " + std::to_string(head_bits) + " bits"
                                   : std::string())
        << ", " << bits_text(summary.quantized_bits / summary.quantized_weights)
        << " bits per quantized weight" << details << "): " << files << " files, "
        << summary.tensors << " tensors, " << bytes << " bytes ("
        << human_bytes(static_cast<std::int64_t>(bytes)) << ")\n";
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
  CLI::App* command = app.add_subcommand("quantize",
                                         "Quantize an FP16/BF16 model directory to EXL2, EXL3 or "
                                         "W4A16/W8A16 with Quire's own writers");
  command->add_option("IN", a->in, "FP16 or BF16 model directory")->type_name("DIR");
  command->add_option("OUT", a->out, "Directory to create (new or empty)")->type_name("DIR");
  command
      ->add_option("--format", a->format,
                   "exl2:BITS (2.0 to 8.0); exl3:BITS[:CODEBOOK] (1.0 to 8.0; codebook mul1, "
                   "the default, mcg or 3inst); or compressed-tensors' w4a16, w4a16-asym or "
                   "w8a16 (llm-compressor's pack-quantized)")
      ->type_name("FORMAT")
      ->required();
  command
      ->add_option("--head-bits", a->head_bits,
                   "Width of an untied head (default 6): EXL2 2, 3, 4, 5, 6 or 8; EXL3 1 to 8, "
                   "or 16 for FP16")
      ->type_name("N");
  command
      ->add_option("--group-size", a->group_size,
                   "EXL2: rows per group (default 32); W4A16/W8A16: inputs per scale (default "
                   "128), or \"channel\" for one per output")
      ->type_name("N");
  command
      ->add_option("--seed", a->seed,
                   "Seed of EXL2's act-order permutations or EXL3's signs (default 1)")
      ->type_name("N");
  command
      ->add_option("--calibration", a->calibration,
                   "EXL3, W4A16, W8A16: a text the FP16 model computes to weigh each layer's "
                   "errors by its inputs (LDLQ; GPTQ); without it, weights are coded alone")
      ->type_name("FILE");
  command
      ->add_option("--calibration-tokens", a->calibration_tokens,
                   "EXL3, W4A16, W8A16: use only the calibration text's first N tokens (default "
                   "all)")
      ->type_name("N");
  command
      ->add_option("--out-scales", a->out_scales,
                   "EXL3: scale each output by its RMS: auto (with calibration, unless a few input "
                   "channels dominate), always or never")
      ->type_name("MODE");
  command->add_option("--threads", a->threads, "EXL3: threads of the search (default all)")
      ->type_name("N");
  command->add_flag("--actorder", a->actorder,
                    "W4A16/W8A16 with --calibration: GPTQ takes inputs by decreasing power and "
                    "groups them in that order (weight_g_idx)");
  command->callback([a, &exit_code] { exit_code = run_quantize(*a, std::cout, std::cerr); });
}

}  // namespace quire::cli
