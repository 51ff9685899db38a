#include "make_model_command.h"

#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <iostream>
#include <stdexcept>
#include <type_traits>

#include "cli_support.h"
#include "quire/engine/modelgen/random_model.h"

namespace quire::cli {
namespace {

namespace modelgen = engine::modelgen;

template <typename T>
T parse_integer(const std::string& option, const std::string& text) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error == std::errc::result_out_of_range) {
    throw std::invalid_argument(option + ": " + text + " is out of range");
  }
  if (text.empty() || error != std::errc() || stop != end) {
    throw std::invalid_argument(option + ": \"" + text + "\" is not " +
                                (std::is_unsigned_v<T> ? "a non-negative integer" : "an integer"));
  }
  return value;
}

double parse_decimal(const std::string& option, const std::string& text) {
  double value = 0.0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end || !std::isfinite(value)) {
    throw std::invalid_argument(option + ": \"" + text + "\" is not a number");
  }
  return value;
}

void set_int(const std::optional<std::string>& text, const char* option, int& target) {
  if (text) target = parse_integer<int>(option, *text);
}

modelgen::RandomModelSpec spec_from(const MakeModelArguments& a) {
  modelgen::RandomModelSpec spec;
  spec.architecture = a.arch;
  spec.format = modelgen::parse_format(a.format);
  set_int(a.layers, "layers", spec.layers);
  set_int(a.hidden, "hidden", spec.hidden);
  set_int(a.heads, "heads", spec.heads);
  set_int(a.kv_heads, "kv_heads", spec.kv_heads);
  set_int(a.head_dim, "head_dim", spec.head_dim);
  set_int(a.intermediate, "intermediate", spec.intermediate);
  set_int(a.vocab, "vocab", spec.vocab);
  set_int(a.shards, "shards", spec.shards);
  set_int(a.gptq_group_size, "gptq_group_size", spec.gptq_group_size);
  set_int(a.head_bits, "head_bits", spec.exl2_head_bits);
  if (a.seed) spec.seed = parse_integer<std::uint64_t>("seed", *a.seed);
  if (a.sliding_window)
    spec.sliding_window = parse_integer<int>("sliding_window", *a.sliding_window);
  if (a.rope_scaling) spec.rope_scaling = modelgen::parse_rope_scaling(*a.rope_scaling);
  if (a.rope_theta) spec.rope_theta = parse_decimal("rope_theta", *a.rope_theta);
  if (a.max_position_embeddings) {
    spec.max_position_embeddings =
        parse_integer<std::int64_t>("max_position_embeddings", *a.max_position_embeddings);
  }
  if (a.tie && a.no_tie) throw std::invalid_argument("tie: --tie and --no-tie exclude each other");
  if (a.tie || a.no_tie) spec.tie_embeddings = a.tie;
  if ((a.gptq_v2 || a.gptq_no_act_order) && spec.format.kind != modelgen::WeightFormat::GPTQ) {
    throw std::invalid_argument(
        "format: --gptq-v2 and --gptq-no-act-order apply to --format gptq only");
  }
  spec.gptq_v2 = a.gptq_v2;
  spec.gptq_act_order = !a.gptq_no_act_order;
  if (a.head_bits && spec.format.kind != modelgen::WeightFormat::EXL2) {
    throw std::invalid_argument(
        "head_bits: only EXL2 models quantize the head; add --format exl2:BITS");
  }
  return spec;
}

// The library names options as RandomModelSpec does ("kv_heads: ..."); the
// user typed them as flags ("--kv-heads").
std::string as_typed(const std::string& message) {
  const std::size_t colon = message.find(": ");
  if (colon == std::string::npos) return message;
  std::string name = message.substr(0, colon);
  if (name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") != std::string::npos) return message;
  if (name == "out_dir") return "OUT" + message.substr(colon);
  if (name == "tie") return message.substr(colon + 2);
  for (char& c : name)
    c = c == '_' ? '-' : c;
  return "--" + name + message.substr(colon);
}

}  // namespace

int run_make_model(const MakeModelArguments& arguments, std::ostream& out, std::ostream& err) {
  constexpr const char* kPrefix = "quire-cli make-model: ";
  if (arguments.out.empty()) {
    err << kPrefix << "OUT is missing: name the directory to write the model into\n";
    return 2;
  }
  try {
    const modelgen::RandomModelSpec spec = spec_from(arguments);
    const modelgen::WrittenModel written = modelgen::write_random_model(spec, arguments.out);
    out << "wrote " << arguments.out << " (" << modelgen::describe(spec)
        << "): " << written.files.size() << " files, " << written.tensors << " tensors, "
        << written.total_bytes << " bytes ("
        << human_bytes(static_cast<std::int64_t>(written.total_bytes)) << ")\n";
    return 0;
  } catch (const std::invalid_argument& error) {
    err << kPrefix << as_typed(error.what()) << '\n';
    return 2;
  } catch (const std::exception& error) {
    err << kPrefix << error.what() << '\n';
    return 1;
  }
}

void add_make_model_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<MakeModelArguments>();
  CLI::App* command = app.add_subcommand(
      "make-model", "Write a small random model directory (config, tokenizer, safetensors)");
  command->add_option("OUT", a->out, "Directory to create (new or empty)")->type_name("DIR");
  command->add_option("--arch", a->arch, "llama, mistral or qwen2")
      ->type_name("NAME")
      ->capture_default_str();
  command->add_option("--format", a->format, "fp16, bf16, exl2:BITS (2.0 to 8.0) or gptq")
      ->type_name("FORMAT")
      ->capture_default_str();
  const auto value = [&](const char* name, std::optional<std::string>& target, const char* help,
                         const char* type = "N") {
    command->add_option(name, target, help)->type_name(type);
  };
  value("--layers", a->layers, "Decoder layers (default 2)");
  value("--hidden", a->hidden, "Hidden size (default 128)");
  value("--heads", a->heads, "Attention heads (default 4)");
  value("--kv-heads", a->kv_heads, "Key/value heads (default 2)");
  value("--head-dim", a->head_dim, "Head dimension (default hidden / heads)");
  value("--intermediate", a->intermediate, "MLP size (default 256)");
  value("--vocab", a->vocab, "Vocabulary size (320 to 4096, default 512)");
  value("--seed", a->seed, "Seed of every random value (default 1)");
  value("--sliding-window", a->sliding_window, "Attention window (mistral, qwen2)");
  value("--rope-scaling", a->rope_scaling, "none, linear:F, dynamic:F or llama3", "TYPE");
  value("--rope-theta", a->rope_theta, "Rotary base (default 10000)", "X");
  value("--max-position-embeddings", a->max_position_embeddings, "Context length (default 2048)");
  value("--shards", a->shards, "Safetensors files (default 1)");
  value("--gptq-group-size", a->gptq_group_size, "GPTQ group size (default 32)");
  value("--head-bits", a->head_bits, "EXL2 head width: 2, 3, 4, 5, 6 or 8 (default 6)");
  command->add_flag("--tie", a->tie, "Share the embeddings with the head");
  command->add_flag("--no-tie", a->no_tie, "Give the model its own head");
  command->add_flag("--gptq-v2", a->gptq_v2, "Store exact GPTQ zero points (gptq_v2)");
  command->add_flag("--gptq-no-act-order", a->gptq_no_act_order, "GPTQ groups in input order");
  command->callback([a, &exit_code] { exit_code = run_make_model(*a, std::cout, std::cerr); });
}

}  // namespace quire::cli
