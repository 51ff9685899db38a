#include "make_model_command.h"

#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <iostream>
#include <stdexcept>
#include <type_traits>

#include "cli_support.h"
#include "quire/engine/modelgen/model_presets.h"
#include "quire/engine/modelgen/published_config.h"
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

// "128001,128008,128009" -> ids.
std::vector<int> parse_id_list(const std::string& option, const std::string& text) {
  std::vector<int> ids;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::size_t end = comma == std::string::npos ? text.size() : comma;
    ids.push_back(parse_integer<int>(option, text.substr(start, end - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return ids;
}

// "50:30" -> {50, 30}; 0 turns a cap off.
modelgen::SoftcapSpec parse_softcap(const std::string& text) {
  const std::size_t colon = text.find(':');
  const auto fail = [&]() -> modelgen::SoftcapSpec {
    throw std::invalid_argument("softcap: \"" + text +
                                "\" is not ATTN:FINAL, two caps >= 0 (0 for none)");
  };
  if (colon == std::string::npos) return fail();
  try {
    const modelgen::SoftcapSpec caps{parse_decimal("softcap", text.substr(0, colon)),
                                     parse_decimal("softcap", text.substr(colon + 1))};
    if (caps.attention < 0.0 || caps.final < 0.0) return fail();
    return caps;
  } catch (const std::invalid_argument&) {
    return fail();
  }
}

bool is_gemma(const std::string& architecture) {
  return architecture == "gemma2" || architecture == "gemma3";
}

bool has_experts(const std::string& architecture) {
  return architecture == "mixtral" || architecture == "qwen3_moe";
}

// An option that only some families read, given for another: refused here,
// where its flag can be named, rather than written into a file that ignores it.
void require_family(bool given, bool applies, const char* option, const char* families) {
  if (given && !applies) {
    throw std::invalid_argument(std::string(option) + ": applies to --arch " + families + " only");
  }
}

modelgen::RandomModelSpec base_spec(const MakeModelArguments& a) {
  if (a.config_from) {
    if (a.like)
      throw std::invalid_argument("config_from: --like and --config-from exclude each other");
    if (a.arch) {
      throw std::invalid_argument(
          "arch: --config-from takes the architecture from the file's class name");
    }
    if (a.multimodal) {
      throw std::invalid_argument(
          "multimodal: --config-from takes it from the file's class name "
          "(Gemma3ForConditionalGeneration)");
    }
    return modelgen::spec_from_published_config(*a.config_from);
  }
  if (a.like) {
    modelgen::RandomModelSpec spec = modelgen::preset_spec(*a.like);
    if (a.arch) spec.architecture = *a.arch;
    return spec;
  }
  return modelgen::default_spec(a.arch.value_or("llama"));
}

void set_family_options(const MakeModelArguments& a, modelgen::RandomModelSpec& spec) {
  const std::string& arch = spec.architecture;
  require_family(a.softcap.has_value(), is_gemma(arch), "softcap", "gemma2 and gemma3");
  require_family(a.query_pre_attn_scalar.has_value(), is_gemma(arch), "query_pre_attn_scalar",
                 "gemma2 and gemma3");
  require_family(a.layer_types, is_gemma(arch), "layer_types", "gemma2 and gemma3");
  require_family(a.sliding_window_pattern.has_value(), arch == "gemma3", "sliding_window_pattern",
                 "gemma3 (Gemma 2 alternates)");
  require_family(a.multimodal, arch == "gemma3" || arch == "mistral" || arch == "qwen2_5_vl",
                 "multimodal", "gemma3, mistral and qwen2_5_vl");
  require_family(a.partial_rotary_factor.has_value(), arch == "phi3", "partial_rotary_factor",
                 "phi3");
  require_family(a.experts.has_value(), has_experts(arch), "experts", "mixtral and qwen3_moe");
  require_family(a.experts_per_token.has_value(), has_experts(arch), "experts_per_token",
                 "mixtral and qwen3_moe");
  require_family(a.expert_intermediate.has_value(), arch == "qwen3_moe", "expert_intermediate",
                 "qwen3_moe (Mixtral's experts are --intermediate wide)");
  require_family(a.mlp_only_layers.has_value(), arch == "qwen3_moe", "mlp_only_layers",
                 "qwen3_moe");
  require_family(a.no_norm_topk_prob, arch == "qwen3_moe", "norm_topk_prob", "qwen3_moe");

  if (a.softcap) spec.softcap = parse_softcap(*a.softcap);
  if (a.query_pre_attn_scalar) {
    spec.query_pre_attn_scalar = parse_decimal("query_pre_attn_scalar", *a.query_pre_attn_scalar);
  }
  set_int(a.sliding_window_pattern, "sliding_window_pattern", spec.sliding_window_pattern);
  if (a.layer_types) spec.write_layer_types = true;
  if (a.multimodal) spec.multimodal = true;
  if (a.text_prefix) {
    if (!spec.multimodal) {
      throw std::invalid_argument(
          "text_prefix: applies to a model with a vision tower (--multimodal)");
    }
    spec.text_prefix = *a.text_prefix;
  }
  if (a.partial_rotary_factor) {
    spec.partial_rotary_factor = parse_decimal("partial_rotary_factor", *a.partial_rotary_factor);
  }
  set_int(a.experts, "experts", spec.moe.experts);
  set_int(a.experts_per_token, "experts_per_token", spec.moe.experts_per_token);
  set_int(a.expert_intermediate, "expert_intermediate", spec.moe.expert_intermediate);
  if (a.mlp_only_layers) {
    spec.moe.mlp_only_layers = a.mlp_only_layers->empty()
                                   ? std::vector<int>{}
                                   : parse_id_list("mlp_only_layers", *a.mlp_only_layers);
  }
  if (a.no_norm_topk_prob) spec.moe.norm_topk_prob = false;
}

modelgen::RandomModelSpec spec_from(const MakeModelArguments& a) {
  modelgen::RandomModelSpec spec = base_spec(a);
  if (a.format) {
    spec.format = modelgen::parse_format(*a.format);
    // A preset's torch_dtype follows its BF16 weights; other weights name their own.
    if (a.like && !a.torch_dtype) spec.torch_dtype.clear();
  }
  set_int(a.layers, "layers", spec.layers);
  set_int(a.hidden, "hidden", spec.hidden);
  set_int(a.heads, "heads", spec.heads);
  set_int(a.kv_heads, "kv_heads", spec.kv_heads);
  set_int(a.head_dim, "head_dim", spec.head_dim);
  set_int(a.intermediate, "intermediate", spec.intermediate);
  set_int(a.vocab, "vocab", spec.vocab);
  set_int(a.shards, "shards", spec.shards);
  set_int(a.gptq_group_size, "gptq_group_size", spec.gptq_group_size);
  set_int(
      a.head_bits, "head_bits",
      spec.format.kind == modelgen::WeightFormat::EXL3 ? spec.exl3_head_bits : spec.exl2_head_bits);
  if (a.seed) spec.seed = parse_integer<std::uint64_t>("seed", *a.seed);
  if (a.sliding_window) {
    // "null": the key is written as null (Mistral v0.3, Nemo): no window.
    std::erase_if(spec.extra_config,
                  [](const auto& entry) { return entry.first == "sliding_window"; });
    if (*a.sliding_window == "null") {
      // Mixtral, Phi-3 and Qwen3-MoE write null for no window already.
      const std::string& arch = spec.architecture;
      if (arch != "mistral" && arch != "mixtral" && arch != "phi3" && arch != "qwen3_moe") {
        throw std::invalid_argument(
            "sliding_window: null applies to --arch mistral, mixtral, phi3 and qwen3_moe only");
      }
      spec.sliding_window.reset();
      if (arch == "mistral") spec.extra_config.emplace_back("sliding_window", "null");
    } else {
      spec.sliding_window = parse_integer<int>("sliding_window", *a.sliding_window);
    }
  }
  if (a.tokenizer_vocab)
    spec.tokenizer_vocab = parse_integer<int>("tokenizer_vocab", *a.tokenizer_vocab);
  if (a.torch_dtype) spec.torch_dtype = *a.torch_dtype;
  if (a.tokenizer_from) {
    // The copied tokenizer decides the vocabulary and the special ids unless
    // the options say otherwise.
    spec.tokenizer_from = *a.tokenizer_from;
    spec.vocab = a.vocab ? parse_integer<int>("vocab", *a.vocab) : 0;
    spec.tokenizer_vocab = 0;
    spec.bos_id.reset();
    spec.eos_ids.clear();
  }
  if (a.bos) spec.bos_id = parse_integer<int>("bos", *a.bos);
  if (a.eos) spec.eos_ids = parse_id_list("eos", *a.eos);
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
  // A published GPTQ config.json says both; the flags only switch them on and off.
  if (a.gptq_v2) spec.gptq_v2 = true;
  if (a.gptq_no_act_order) spec.gptq_act_order = false;
  const modelgen::WeightFormat kind = spec.format.kind;
  const bool grouped = kind == modelgen::WeightFormat::W4A16 ||
                       kind == modelgen::WeightFormat::W8A16 ||
                       kind == modelgen::WeightFormat::INT8 || kind == modelgen::WeightFormat::AWQ;
  if ((a.group_size || a.actorder) && !grouped) {
    throw std::invalid_argument(
        "format: --group-size and --actorder apply to --format w4a16, w4a16-asym, w8a16, "
        "w8a16-asym, int8 and awq only (GPTQ has --gptq-group-size)");
  }
  if (a.group_size) {
    spec.group_size =
        *a.group_size == "channel" ? 0 : parse_integer<int>("group_size", *a.group_size);
  }
  if (a.actorder) spec.actorder = true;
  if (a.head_bits && spec.format.kind != modelgen::WeightFormat::EXL2 &&
      spec.format.kind != modelgen::WeightFormat::EXL3) {
    throw std::invalid_argument(
        "head_bits: only EXL2 and EXL3 models quantize the head; add --format exl2:BITS or "
        "exl3:BITS");
  }
  set_family_options(a, spec);
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
  if (name == "norm_topk_prob") return "--no-norm-topk-prob" + message.substr(colon);
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
  command
      ->add_option("--like", a->like,
                   "Shape of a published model, scaled down: llama-3.1-8b-instruct, "
                   "llama-3.2-3b-instruct, qwen2.5-7b-instruct, qwen2.5-1.5b-instruct, "
                   "mistral-7b-instruct-v0.3, mistral-nemo-instruct-2407, gemma-2-9b-it, "
                   "gemma-3-4b-it, phi-3.5-mini-instruct, phi-4-mini-instruct, "
                   "mixtral-8x7b-instruct-v0.1 or "
                   "qwen3-30b-a3b; the other options override it")
      ->type_name("MODEL");
  command
      ->add_option("--config-from", a->config_from,
                   "A published config.json: its class, settings and key order, its shapes "
                   "scaled down; the other options override it")
      ->type_name("FILE");
  command
      ->add_option("--arch", a->arch,
                   "llama, mistral, qwen2, qwen3, gemma2, gemma3, phi3, mixtral or qwen3_moe "
                   "(default llama)")
      ->type_name("NAME");
  command
      ->add_option("--format", a->format,
                   "fp16, bf16, exl2:BITS (2.0 to 8.0), exl3:BITS[:mul1|mcg|3inst] (1.0 to "
                   "8.0, exllamav3's layout with random trellis data), gptq (4-bit) or "
                   "gptq:8, fp8 (a scale per row) or fp8-tensor (one scale), compressed-tensors' "
                   "w4a16, w4a16-asym, w8a16, w8a16-asym (pack-quantized) or int8 "
                   "(naive-quantized), or awq (AutoAWQ's GEMM layout) (default fp16)")
      ->type_name("FORMAT");
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
  value("--vocab", a->vocab,
        "Embedding rows (320 to 4096, default 512; with --tokenizer-from its size or more)");
  value("--tokenizer-vocab", a->tokenizer_vocab,
        "Tokens of the trained tokenizer, fewer than --vocab to pad the embedding");
  value("--tokenizer-from", a->tokenizer_from,
        "Copy the tokenizer files of this model directory instead of training one", "DIR");
  value("--torch-dtype", a->torch_dtype, "config.json's torch_dtype (default the weights')",
        "NAME");
  value("--bos", a->bos, "BOS token id (default 1)", "ID");
  value("--eos", a->eos, "EOS token ids, comma-separated (default 2)", "IDS");
  value("--seed", a->seed, "Seed of every random value (default 1)");
  value("--sliding-window", a->sliding_window,
        "Attention window (every family but llama; Gemma's sliding layers), or null to write "
        "the key as null (mistral, mixtral, phi3, qwen3_moe)");
  value("--rope-scaling", a->rope_scaling,
        "none, linear:F, dynamic:F, llama3[:F[:ORIGINAL[:LOW:HIGH]]], yarn:F[:ORIGINAL] or "
        "longrope[:ORIGINAL] (phi3; original context 16 unless given)",
        "TYPE");
  value("--rope-theta", a->rope_theta, "Rotary base (default 10000)", "X");
  value("--max-position-embeddings", a->max_position_embeddings, "Context length (default 2048)");
  value("--shards", a->shards, "Safetensors files (default 1)");
  value("--gptq-group-size", a->gptq_group_size, "GPTQ group size (default 32)");
  value("--head-bits", a->head_bits,
        "Head width: EXL2 2, 3, 4, 5, 6 or 8; EXL3 1 to 8, or 16 for FP16 (default 6)");
  value("--softcap", a->softcap,
        "Gemma's attention and final logit soft-caps, ATTN:FINAL, 0 for none (gemma2 50:30, "
        "gemma3 none)",
        "A:F");
  value("--query-pre-attn-scalar", a->query_pre_attn_scalar,
        "Gemma's attention scale is its -1/2 power (default head_dim)", "X");
  value("--sliding-window-pattern", a->sliding_window_pattern,
        "gemma3: every Nth layer attends fully, the others slide (default 6)");
  command->add_flag("--layer-types", a->layer_types,
                    "gemma2, gemma3: list every layer's attention in config.json");
  command->add_flag("--multimodal", a->multimodal,
                    "gemma3: Gemma3ForConditionalGeneration with a small vision tower; "
                    "mistral: Mistral3ForConditionalGeneration (Mistral Small 3.1) with a "
                    "small Pixtral tower (qwen2_5_vl always has one)");
  value("--text-prefix", a->text_prefix,
        "With --multimodal: language_model.model. (gemma3 as published, default), model. "
        "(qwen2_5_vl as published, default) or model.language_model. (transformers 4.52 "
        "and later)",
        "PREFIX");
  value("--partial-rotary-factor", a->partial_rotary_factor,
        "phi3: the share of each head that rotates (default 1)", "F");
  value("--experts", a->experts, "mixtral, qwen3_moe: experts per layer (default 4)");
  value("--experts-per-token", a->experts_per_token,
        "mixtral, qwen3_moe: experts each token uses (default 2)", "K");
  value("--expert-intermediate", a->expert_intermediate,
        "qwen3_moe: each expert's MLP size (default intermediate / 2)");
  value("--mlp-only-layers", a->mlp_only_layers,
        "qwen3_moe: layers with a dense MLP instead of experts, comma-separated", "LAYERS");
  command->add_flag("--no-norm-topk-prob", a->no_norm_topk_prob,
                    "qwen3_moe: leave the chosen experts' weights unnormalised");
  command->add_flag("--tie", a->tie, "Share the embeddings with the head");
  command->add_flag("--no-tie", a->no_tie, "Give the model its own head");
  command->add_flag("--gptq-v2", a->gptq_v2, "Store exact GPTQ zero points (gptq_v2)");
  command->add_flag("--gptq-no-act-order", a->gptq_no_act_order, "GPTQ groups in input order");
  value("--group-size", a->group_size,
        "w4a16, w8a16, int8, awq: inputs per group, or channel for a scale per output row "
        "(default w4a16 and awq 128, w8a16 and int8 channel)",
        "N|channel");
  command->add_flag("--actorder", a->actorder,
                    "w4a16, w8a16: group actorder, inputs assigned to groups in a shuffled "
                    "order (weight_g_idx)");
  command->callback([a, &exit_code] { exit_code = run_make_model(*a, std::cout, std::cerr); });
}

}  // namespace quire::cli
