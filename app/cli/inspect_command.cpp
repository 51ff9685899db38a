// quire-cli inspect: what a model directory holds and where it would go,
// answered from the file headers alone.

#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_support.h"
#include "engine_options.h"
#include "hub_model_option.h"
#include "inspect_layers.h"
#include "inspect_vision.h"
#include "model_commands.h"
#include "quire/engine/generator/chat_format.h"
#include "quire/engine/generator/vocabulary_check.h"
#include "quire/engine/planner/planner.h"
#include "quire/engine/runtime/host_copy_speed.h"
#include "quire/engine/runtime/model_description.h"
#include "quire/engine/runtime/weights_summary.h"
#include "quire/engine/tokenizer/tokenizer.h"

namespace quire::cli {
namespace {

using Json = nlohmann::ordered_json;

// The tokenizer and the prompt format, or why they cannot be used: a model
// whose tokenizer is broken is still described, and the command ends with 2.
struct TextSide {
  Json json = Json::object();
  std::string tokenizer_line;
  std::string prompt_line;
  std::string problem;
};

TextSide describe_text_side(const std::string& directory, const engine::ModelDescription& model) {
  TextSide side;
  try {
    const engine::Tokenizer tokenizer = engine::Tokenizer::load(directory);
    engine::check_tokenizer_fits_model(tokenizer, model);
    side.json["tokenizer"] = {{"description", tokenizer.description()},
                              {"vocab_size", tokenizer.vocab_size()},
                              {"bos", tokenizer.bos() ? Json(*tokenizer.bos()) : Json(nullptr)},
                              {"eos", tokenizer.eos()}};
    side.tokenizer_line = tokenizer.description();
    const engine::FormatChoice choice = engine::choose_chat_format(directory, "auto");
    side.json["prompt_format"] = {{"name", choice.format.name()}, {"title", choice.format.title()}};
    side.prompt_line = choice.format.title();
    if (!choice.notice.empty()) {
      side.json["prompt_format"]["notice"] = choice.notice;
      side.prompt_line += " (" + choice.notice + ")";
    }
  } catch (const engine::ModelError& error) {
    side.problem = error.what();
    side.json["problem"] = side.problem;
  }
  return side;
}

struct InspectOptions {
  std::string directory;
  bool json = false;
  EngineOptions engine;
};

int run_inspect(const InspectOptions& options) {
  const engine::ModelDescription model = engine::ModelDescription::open(options.directory);
  const engine::ModelConfig& c = model.config;
  engine::RuntimeOptions runtime = options.engine.runtime_options();
  const std::unique_ptr<kernels::Backend> backend = options.engine.make_backend();
  const std::vector<kernels::DeviceInfo> devices = backend->devices();
  if (runtime.cache_residence != engine::CacheResidence::Device && !devices.empty()) {
    // The plan says what streaming the pages costs at this machine's speed.
    runtime.host_copy_bytes_per_second =
        engine::measure_host_copy_speed(*backend, devices.front().index);
  }
  const engine::PlacementPlan plan =
      engine::plan_placement(engine::placement_request(model, devices, runtime));

  std::int64_t weight_bytes = (model.head_tied ? 0 : model.embedding_bytes) +
                              model.final_norm_bytes + model.head.device_bytes;
  for (const engine::LayerDescription& layer : model.layers)
    weight_bytes += layer.device_bytes();

  Json kv = Json::object();
  for (const cache::CacheFormat format : cache::all_cache_formats()) {
    const cache::CacheFormatInfo& info = cache::format_info(format);
    const std::int64_t page = info.page_bytes(model.kv_shape(), runtime.page_size).total() *
                              static_cast<std::int64_t>(model.layers.size());
    kv[std::string(info.name)] = {{"bytes_per_page", page},
                                  {"bytes_per_token", double(page) / runtime.page_size}};
  }

  Json layers = Json::array();
  for (std::size_t i = 0; i < model.layers.size(); ++i)
    layers.push_back(layer_json(model, i));
  Json head = linear_json(model.head);
  head["tied"] = model.head_tied;
  const TextSide text_side = describe_text_side(options.directory, model);
  const int status = text_side.problem.empty() ? 0 : 2;

  if (options.json) {
    Json plan_json{{"fits", plan.fits},
                   {"context_tokens", plan.context_tokens},
                   {"cache_format", options.engine.cache},
                   {"largest_context_tokens",
                    plan.largest_context ? Json(plan.largest_context->tokens) : Json(nullptr)},
                   {"problem", plan.problem},
                   {"cache_residence", options.engine.cache_residence},
                   {"devices", Json::array()}};
    // The device index that holds every layer's cache (--cache-device), or null.
    plan_json["cache_device"] =
        plan.cache_slot >= 0 ? Json(plan.devices[static_cast<std::size_t>(plan.cache_slot)].index)
                             : Json(nullptr);
    if (plan.host_cache) {
      plan_json["host_cache"] = {{"bytes", plan.host_cache->bytes},
                                 {"copy_bytes_per_step", plan.host_cache->copy_bytes_per_step},
                                 {"copy_bytes_per_second", plan.host_cache->copy_bytes_per_second},
                                 {"seconds_per_step", plan.host_cache->seconds_per_step}};
    }
    // The vision tower in host memory; null for a model without one. Its
    // "fits" is its own: the language model loads either way.
    plan_json["vision_tower"] = Json(nullptr);
    if (const auto& tower = plan.vision_tower) {
      plan_json["vision_tower"] = {
          {"name", tower->name},
          {"where", "host memory"},
          {"weight_bytes", tower->weight_bytes},
          {"scratch_bytes", tower->scratch_bytes},
          {"usable", tower->usable >= 0 ? Json(tower->usable) : Json(nullptr)},
          {"fits", tower->fits},
          {"problem", tower->problem}};
    }
    for (const engine::DevicePlacement& device : plan.devices) {
      plan_json["devices"].push_back({{"index", device.index},
                                      {"name", device.name},
                                      {"weights", device.weights},
                                      {"cache", device.cache},
                                      {"cache_staging", device.staging},
                                      {"scratch", device.scratch},
                                      {"reserve", device.reserve},
                                      {"free_before", device.free_before},
                                      {"free_after", device.free_after}});
    }
    Json out{
        {"directory", options.directory},
        {"architecture", c.architecture},
        {"layers", c.num_layers},
        {"hidden_size", c.hidden_size},
        {"attention_heads", c.num_heads},
        {"kv_heads", c.num_kv_heads},
        {"head_dim", c.head_dim},
        {"intermediate_size", c.intermediate_size},
        {"vocab_size", c.vocab_size},
        {"parameters", model.parameters},
        {"active_parameters", model.active_parameters},
        {"experts", c.moe.experts > 0 ? Json{{"count", c.moe.experts},
                                             {"per_token", c.moe.experts_per_token},
                                             {"intermediate_size", c.moe.intermediate_size}}
                                      : Json(nullptr)},
        {"unused_tensors", {{"count", model.unused_tensors}, {"bytes", model.unused_bytes}}},
        {"weight_bytes", weight_bytes},
        {"embedding",
         {{"dtype", std::string(kernels::dtype_name(model.embedding_dtype))},
          {"bytes", model.embedding_bytes}}},
        {"head", head},
        {"weights", weights_json(model)},
        {"layer_formats", layers},
        {"kv_cache", kv},
        {"kv_scales", model.kv_scales ? Json(model.kv_scales->per_head ? "attn_head" : "tensor")
                                      : Json(nullptr)},
        {"kv_scales_note", engine::describe_kv_scales(model)},
        {"vision", vision_json(model.vision)},
        {"plan", plan_json}};
    for (auto& [key, value] : text_side.json.items())
      out[key] = value;
    std::cout << out.dump(2) << '\n';
    return status;
  }

  std::cout << options.directory << '\n'
            << "  architecture  " << model.architecture->label << " (" << c.architecture << "), "
            << c.num_layers << " layers, hidden " << c.hidden_size << ", " << c.num_heads
            << " heads (" << c.num_kv_heads << " K/V, dim " << c.head_dim << "), vocabulary "
            << c.vocab_size << '\n'
            << "  parameters    " << model.parameters << ", weights " << human_bytes(weight_bytes);
  if (c.moe.experts > 0) {
    std::cout << "; " << experts_text(c) << ", " << model.active_parameters
              << " parameters active per token";
  }
  std::cout << '\n'
            << "  embedding     " << kernels::dtype_name(model.embedding_dtype) << ", head "
            << (model.head_tied ? "tied to the embedding" : linear_text(model.head)) << '\n'
            << "  weights       " << engine::summarize_weights(model).text() << '\n';
  if (text_side.problem.empty()) {
    std::cout << "  tokenizer     " << text_side.tokenizer_line << '\n'
              << "  prompt        " << text_side.prompt_line << '\n';
  } else {
    std::cout << "  tokenizer     cannot be used: " << text_side.problem << '\n';
  }
  if (const std::string vision = vision_text(model.vision); !vision.empty()) {
    std::cout << "  vision        " << vision << '\n';
  }
  if (model.unused_tensors > 0) {
    std::cout << "  not loaded    " << model.unused_tensors << " tensors ("
              << human_bytes(model.unused_bytes) << ")"
              << (model.architecture->multimodal
                      ? ": the vision tower; Quire runs the language model and leaves it on disk"
                      : ": not part of the language model")
              << '\n';
  }
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    std::cout << "  layer " << i << (i < 10 ? "       " : "      ") << layer_text(model, i) << '\n';
  }
  std::cout << "  KV per token ";
  bool first = true;
  for (auto& [name, entry] : kv.items()) {
    std::cout << (first ? " " : ", ") << name << ' '
              << human_bytes(static_cast<std::int64_t>(entry["bytes_per_token"].get<double>()));
    first = false;
  }
  if (const std::string scales = engine::describe_kv_scales(model); !scales.empty()) {
    std::cout << "\n  K/V scales    " << scales;
  }
  std::cout << "\n\n" << engine::describe_plan(plan) << '\n';
  if (!text_side.problem.empty()) std::cerr << "quire-cli: " << text_side.problem << '\n';
  return status;
}

}  // namespace

void add_inspect_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<InspectOptions>();
  CLI::App* command =
      app.add_subcommand("inspect", "Describe a model directory and plan where it would go");
  command->add_option("directory", options->directory, kModelDirectoryHelp)
      ->required()
      ->transform(hub_model_reference());
  command->add_flag("--json", options->json, "Print one JSON object");
  options->engine.add_to(*command, true);
  command->callback([options, &exit_code] { exit_code = run_inspect(*options); });
}

}  // namespace quire::cli
