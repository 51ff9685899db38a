// quantization_config: the keys of GPTQ, AutoAWQ and compressed-tensors
// (llm-compressor) checkpoints that say how the weights are stored. Only the
// shape of the text is checked here; whether Quire runs what it describes is
// decided where the model's layers are read (engine/runtime).

#include <algorithm>
#include <cctype>
#include <regex>
#include <string>
#include <unordered_map>

#include "config_reader.h"

namespace quire::engine {
namespace {

// compressed-tensors' utils/match.py: "re:" and a pattern matched from the
// start of the name (Python's re.match), or the name itself; class names
// match by class, and every layer Quire asks about is a "Linear".
bool matches(std::string_view module, const std::string& target) {
  if (target == "Linear") return true;
  constexpr std::string_view kRegex = "re:";
  if (!target.starts_with(kRegex)) return target == module;
  // Patterns repeat across thousands of layers; compile each once per thread.
  thread_local std::unordered_map<std::string, std::regex> compiled;
  auto found = compiled.find(target);
  if (found == compiled.end()) {
    found = compiled.emplace(target, std::regex(target.substr(kRegex.size()))).first;
  }
  return std::regex_search(module.begin(), module.end(), found->second,
                           std::regex_constants::match_continuous);
}

}  // namespace

const CompressedTensorsGroup* QuantizationConfig::group_for(std::string_view module) const {
  for (const std::string& ignored : ignore)
    if (matches(module, ignored)) return nullptr;
  for (const CompressedTensorsGroup& group : groups) {
    for (const std::string& target : group.targets)
      if (matches(module, target)) return &group;
  }
  return nullptr;
}

namespace detail {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

class QuantizationReader {
 public:
  QuantizationReader(const ConfigReader& reader, const Json& quantization)
      : reader_(reader), root_(quantization) {}

  std::string text(const Json& object, const char* key, const std::string& field) const {
    const Json* value = member(object, key);
    if (value == nullptr) return {};
    if (!value->is_string()) fail(field + "." + key, "must be a string, not " + value->dump());
    return value->get<std::string>();
  }

  std::optional<std::int64_t> integer(const Json& object, const char* key, const std::string& field,
                                      std::int64_t low, std::int64_t high) const {
    const Json* value = member(object, key);
    if (value == nullptr) return std::nullopt;
    if (!value->is_number_integer() || value->get<std::int64_t>() < low ||
        value->get<std::int64_t>() > high) {
      fail(field + "." + key, "must be a whole number from " + std::to_string(low) + " to " +
                                  std::to_string(high) + ", not " + value->dump());
    }
    return value->get<std::int64_t>();
  }

  std::optional<bool> flag(const Json& object, const char* key, const std::string& field) const {
    const Json* value = member(object, key);
    if (value == nullptr) return std::nullopt;
    if (!value->is_boolean())
      fail(field + "." + key, "must be true or false, not " + value->dump());
    return value->get<bool>();
  }

  // A list of strings, or one string (compressed-tensors accepts both).
  std::vector<std::string> names(const Json& object, const char* key,
                                 const std::string& field) const {
    const Json* value = member(object, key);
    if (value == nullptr) return {};
    if (value->is_string()) return {value->get<std::string>()};
    std::vector<std::string> list;
    if (value->is_array()) {
      for (const Json& item : *value) {
        if (!item.is_string()) break;
        list.push_back(item.get<std::string>());
      }
      if (list.size() == value->size()) {
        for (const std::string& name : list)
          check_pattern(field + "." + key, name);
        return list;
      }
    }
    fail(field + "." + key, "must be a list of module names, not " + value->dump());
  }

  CompressedTensorsArgs args(const Json& value, const std::string& field) const {
    if (!value.is_object()) fail(field, "must be an object or null, not " + value.dump());
    CompressedTensorsArgs args;
    args.num_bits = static_cast<int>(integer(value, "num_bits", field, 1, 64).value_or(8));
    args.type = lower(text(value, "type", field));
    if (args.type.empty()) args.type = "int";
    args.symmetric = flag(value, "symmetric", field).value_or(true);
    args.group_size =
        static_cast<int>(integer(value, "group_size", field, -1, INT32_MAX).value_or(0));
    args.strategy = lower(text(value, "strategy", field));
    if (args.strategy.empty()) {
      args.strategy = args.group_size > 0 ? "group" : args.group_size == -1 ? "channel" : "tensor";
    }
    if (const Json* actorder = member(value, "actorder")) {
      if (actorder->is_boolean()) {
        args.actorder = actorder->get<bool>() ? "group" : "";
      } else if (actorder->is_string()) {
        args.actorder = lower(actorder->get<std::string>());
        if (args.actorder == "dynamic") args.actorder = "group";
        if (args.actorder == "static") args.actorder = "weight";
      } else {
        fail(field + ".actorder", "must be true, false, a string or null, not " + actorder->dump());
      }
    }
    if (const Json* dynamic = member(value, "dynamic")) {
      if (dynamic->is_boolean()) {
        args.dynamic = dynamic->get<bool>() ? "true" : "false";
      } else if (dynamic->is_string()) {
        args.dynamic = lower(dynamic->get<std::string>());
      } else {
        fail(field + ".dynamic", "must be true, false or a string, not " + dynamic->dump());
      }
    }
    return args;
  }

  std::vector<CompressedTensorsGroup> groups() const {
    const std::string field = "quantization_config.config_groups";
    const Json* found = member(root_, "config_groups");
    if (found == nullptr) return {};
    if (!found->is_object()) fail(field, "must be an object, not " + found->dump());
    std::vector<CompressedTensorsGroup> groups;
    for (const auto& [name, value] : found->items()) {
      const std::string where = field + "." + name;
      if (!value.is_object()) fail(where, "must be an object, not " + value.dump());
      CompressedTensorsGroup group;
      group.name = name;
      group.targets = names(value, "targets", where);
      if (const Json* weights = member(value, "weights")) {
        group.weights = args(*weights, where + ".weights");
      }
      if (const Json* inputs = member(value, "input_activations")) {
        group.input_activations = args(*inputs, where + ".input_activations");
      }
      group.format = text(value, "format", where);
      groups.push_back(std::move(group));
    }
    return groups;
  }

 private:
  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    reader_.fail(field + " " + what);
  }

  void check_pattern(const std::string& field, const std::string& name) const {
    if (!name.starts_with("re:")) return;
    try {
      std::regex pattern(name.substr(3));
    } catch (const std::regex_error&) {
      fail(field, "holds \"" + name + "\", which is not a regular expression Quire can read");
    }
  }

  const ConfigReader& reader_;
  const Json& root_;
};

}  // namespace

void parse_quantization(const ConfigReader& reader, const Json& quantization,
                        QuantizationConfig& config) {
  const QuantizationReader read(reader, quantization);
  const std::string field = "quantization_config";
  config.method = read.text(quantization, "quant_method", field);
  config.checkpoint_format = read.text(quantization, "checkpoint_format", field);
  // compressed-tensors' format; GPTQModel writes its own checkpoint format
  // under the same key in some versions, which is ignored for GPTQ.
  if (const Json* format = member(quantization, "format"); format && format->is_string()) {
    config.format = format->get<std::string>();
  }
  // EXL2 and EXL3 write fractional "bits"; these are GPTQ's and AWQ's.
  if (config.method == "gptq" || config.method == "awq") {
    const std::int64_t largest = INT32_MAX;
    const char* bits_key = member(quantization, "bits") ? "bits" : "w_bit";
    config.bits = static_cast<int>(read.integer(quantization, bits_key, field, 1, 64).value_or(0));
    const char* group_key = member(quantization, "group_size") ? "group_size" : "q_group_size";
    config.group_size =
        static_cast<int>(read.integer(quantization, group_key, field, -1, largest).value_or(0));
  }
  if (config.method == "awq") {
    config.version = lower(read.text(quantization, "version", field));
    config.zero_point = read.flag(quantization, "zero_point", field).value_or(true);
    config.modules_not_converted = read.names(quantization, "modules_to_not_convert", field);
  }
  config.groups = read.groups();
  config.ignore = read.names(quantization, "ignore", field);
  config.status = read.text(quantization, "quantization_status", field);
  config.kv_cache_scheme = parse_kv_cache_scheme(reader, quantization);
}

}  // namespace detail
}  // namespace quire::engine
