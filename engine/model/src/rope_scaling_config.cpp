// rope_scaling of config.json: every type Quire computes, with the keys each
// needs checked and named in messages.

#include <string>
#include <vector>

#include "config_reader.h"
#include "quire/engine/model/model_config.h"

namespace quire::engine::detail {
namespace {

// The rotary types Quire computes, for messages.
constexpr const char* kSupportedRopeTypes =
    "default (with or without mrope_section), linear, dynamic, llama3, yarn and longrope";

// A longrope factor list: positive numbers, one per rotary frequency.
std::vector<double> factor_list(const ConfigReader& reader, const Json& scaling, const char* key) {
  auto it = scaling.find(key);
  if (it == scaling.end() || !it->is_array() || it->empty()) {
    reader.fail("rope_scaling of type longrope needs \"" + std::string(key) +
                "\", a list of numbers (one per rotary frequency)");
  }
  std::vector<double> factors;
  for (const Json& factor : *it) {
    if (!factor.is_number() || !(factor.get<double>() > 0.0)) {
      reader.fail("rope_scaling \"" + std::string(key) + "\" must list positive numbers, not " +
                  factor.dump());
    }
    factors.push_back(factor.get<double>());
  }
  return factors;
}

// "mrope_section": three positive counts; checked against the rotary
// dimension once head_dim is known (model_config.cpp).
void read_mrope(const ConfigReader& reader, const Json& scaling, RopeScaling& out) {
  if (const Json* section = member(scaling, "mrope_section")) {
    if (!section->is_array() || section->size() != 3) {
      reader.fail(
          "rope_scaling \"mrope_section\" must list three numbers of rotary frequencies "
          "(temporal, height, width), not " +
          section->dump());
    }
    for (const Json& count : *section) {
      if (!count.is_number_integer() || count.get<int>() < 0) {
        reader.fail("rope_scaling \"mrope_section\" must list counts of frequencies, not " +
                    section->dump());
      }
      out.mrope_section.push_back(count.get<int>());
    }
  }
  if (const Json* interleaved = member(scaling, "mrope_interleaved")) {
    if (!interleaved->is_boolean()) {
      reader.fail("rope_scaling \"mrope_interleaved\" must be true or false");
    }
    out.mrope_interleaved = interleaved->get<bool>();
  }
}

}  // namespace

RopeScaling parse_rope_scaling(const ConfigReader& reader) {
  RopeScaling scaling;
  const Json* value = reader.find("rope_scaling");
  if (!value) return scaling;
  if (!value->is_object()) reader.fail("\"rope_scaling\" must be an object or null");
  std::string type;
  for (const char* key : {"rope_type", "type"}) {
    if (auto it = value->find(key); it != value->end() && it->is_string()) {
      type = it->get<std::string>();
      break;
    }
  }
  const auto present = [&](const char* key) {
    auto it = value->find(key);
    return it != value->end() && !it->is_null();
  };
  auto number = [&](const char* key, double fallback) {
    auto it = value->find(key);
    if (it == value->end() || it->is_null()) return fallback;
    if (!it->is_number()) {
      reader.fail("rope_scaling \"" + std::string(key) + "\" must be a number, not " + it->dump());
    }
    return it->get<double>();
  };
  const auto require = [&](const char* key) {
    if (!present(key)) {
      reader.fail("rope_scaling of type \"" + type + "\" needs \"" + std::string(key) + "\"");
    }
    return number(key, 0.0);
  };
  read_mrope(reader, *value, scaling);
  scaling.factor = number("factor", 1.0);
  // transformers reads Qwen2-VL's type "mrope" as "default".
  if (type == "default" || type == "mrope" || type.empty()) return scaling;
  if (!(scaling.factor >= 1.0)) {
    reader.fail("rope_scaling \"factor\" is " + value->at("factor").dump() +
                "; it must be at least 1");
  }
  if (type == "linear") {
    scaling.type = RopeScaling::Type::Linear;
  } else if (type == "dynamic") {
    scaling.type = RopeScaling::Type::Dynamic;
  } else if (type == "llama3") {
    scaling.type = RopeScaling::Type::Llama3;
    scaling.factor = require("factor");
    scaling.low_freq_factor = require("low_freq_factor");
    scaling.high_freq_factor = require("high_freq_factor");
    scaling.original_max_position_embeddings =
        static_cast<std::int64_t>(require("original_max_position_embeddings"));
    if (!(scaling.high_freq_factor > scaling.low_freq_factor) || !(scaling.low_freq_factor > 0.0)) {
      reader.fail("rope_scaling high_freq_factor (" + std::to_string(scaling.high_freq_factor) +
                  ") must exceed low_freq_factor (" + std::to_string(scaling.low_freq_factor) +
                  "), and both must be positive");
    }
    if (scaling.original_max_position_embeddings < 1) {
      reader.fail("rope_scaling original_max_position_embeddings must be positive");
    }
  } else if (type == "yarn") {
    scaling.type = RopeScaling::Type::Yarn;
    scaling.factor = require("factor");
    // As transformers reads them: an absent, null or zero beta takes the
    // default, and mscale applies only with mscale_all_dim.
    if (const double beta = number("beta_fast", 0.0); beta != 0.0) scaling.beta_fast = beta;
    if (const double beta = number("beta_slow", 0.0); beta != 0.0) scaling.beta_slow = beta;
    if (!(scaling.beta_fast > 0.0 && scaling.beta_slow > 0.0)) {
      reader.fail("rope_scaling beta_fast and beta_slow must be positive");
    }
    if (present("attention_factor")) scaling.attention_factor = number("attention_factor", 1.0);
    scaling.mscale = number("mscale", 0.0);
    scaling.mscale_all_dim = number("mscale_all_dim", 0.0);
    if (present("truncate")) {
      if (!value->at("truncate").is_boolean()) {
        reader.fail("rope_scaling \"truncate\" must be true or false");
      }
      scaling.truncate = value->at("truncate").get<bool>();
    }
    if (present("original_max_position_embeddings")) {
      scaling.original_max_position_embeddings =
          static_cast<std::int64_t>(number("original_max_position_embeddings", 0.0));
      if (scaling.original_max_position_embeddings < 1) {
        reader.fail("rope_scaling original_max_position_embeddings must be positive");
      }
    }
  } else if (type == "longrope" || type == "su") {
    scaling.type = RopeScaling::Type::LongRope;
    scaling.short_factor = factor_list(reader, *value, "short_factor");
    scaling.long_factor = factor_list(reader, *value, "long_factor");
    if (present("attention_factor")) scaling.attention_factor = number("attention_factor", 1.0);
    // Phi-3 writes the original context at the top level and derives the
    // factor from it; a file may instead put both inside rope_scaling.
    if (auto original =
            reader.optional_integer("original_max_position_embeddings", 1, std::int64_t{1} << 40)) {
      scaling.original_max_position_embeddings = *original;
      scaling.factor_from_positions = true;
    } else if (present("original_max_position_embeddings")) {
      scaling.original_max_position_embeddings =
          static_cast<std::int64_t>(number("original_max_position_embeddings", 0.0));
    }
  } else {
    reader.fail("rope_scaling type \"" + type + "\" is not supported; Quire runs " +
                kSupportedRopeTypes + " scaling");
  }
  return scaling;
}

}  // namespace quire::engine::detail
