#include <algorithm>
#include <cerrno>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <system_error>

#include "config_files.h"
#include "processor_files.h"
#include "quire/engine/io/safetensors_writer.h"
#include "quire/engine/modelgen/random_model.h"
#include "quire/engine/tokenizer/tokenizer.h"
#include "quire/engine/tokenizer/training.h"
#include "tensor_builder.h"

namespace quire::engine::modelgen {
namespace {

namespace fs = std::filesystem;

// The directory itself, without a trailing separator ("out/" -> "out").
fs::path target_of(const fs::path& out_dir) {
  fs::path target = fs::absolute(out_dir).lexically_normal();
  if (!target.has_filename()) target = target.parent_path();
  return target;
}

void check_target(const fs::path& out_dir, const fs::path& target) {
  if (out_dir.empty()) throw std::invalid_argument("out_dir: no directory given");
  std::error_code error;
  const fs::file_status status = fs::status(target, error);
  if (!fs::exists(status)) return;
  if (!fs::is_directory(status)) {
    throw std::invalid_argument("out_dir: " + out_dir.string() + " exists and is not a directory");
  }
  if (!fs::is_empty(target)) {
    throw std::invalid_argument("out_dir: " + out_dir.string() +
                                " is not empty; choose a new or empty directory");
  }
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(text.data(), static_cast<std::streamsize>(text.size()));
  file.close();
  if (!file)
    throw std::system_error(errno, std::generic_category(), "cannot write " + path.string());
}

int write_tensors(const RandomModelSpec& spec, const fs::path& dir) {
  io::SafetensorsWriter writer;
  writer.set_metadata("format", "pt");  // as PyTorch-saved checkpoints say
  detail::add_model_tensors(spec, writer);
  if (spec.format.kind == WeightFormat::EXL3) {
    write_text(dir / "quantization_config.json",
               detail::exl3_quantization_config_json(spec, writer.listing()));
  }
  if (spec.shards == 1) {
    writer.write(dir / "model.safetensors");
  } else {
    writer.write_sharded(dir, spec.shards);
  }
  return static_cast<int>(writer.size());
}

// A fresh hidden sibling of the target, on the same file system so that the
// finished model can be renamed into place.
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

// The files of a downloaded model that describe its tokenizer, whichever exist.
constexpr const char* kTokenizerFiles[] = {"tokenizer.json",          "tokenizer_config.json",
                                           "special_tokens_map.json", "generation_config.json",
                                           "chat_template.jinja",     "tokenizer.model"};

// A tokenizer copied from a model directory, and what config.json takes from it.
struct CopiedTokenizer {
  int tokens = 0;
  detail::SpecialIds ids;
};

CopiedTokenizer read_copied_tokenizer(const RandomModelSpec& spec) {
  const fs::path& source = *spec.tokenizer_from;
  if (!fs::is_directory(source)) {
    throw std::invalid_argument("tokenizer_from: " + source.string() + " is not a directory");
  }
  const Tokenizer tokenizer = Tokenizer::load(source);
  CopiedTokenizer copied;
  copied.tokens = tokenizer.vocab_size();
  copied.ids = detail::special_ids(spec);
  // A tokenizer without BOS (Qwen's) gets none in config.json either.
  if (!spec.bos_id) copied.ids.bos = tokenizer.bos();
  if (spec.eos_ids.empty() && !tokenizer.eos().empty()) {
    copied.ids.eos.assign(tokenizer.eos().begin(), tokenizer.eos().end());
  }
  return copied;
}

// Returns the number of tensors written.
int write_files(const RandomModelSpec& spec, const fs::path& dir) {
  if (spec.architecture == "qwen2_5_vl") {
    write_text(dir / "preprocessor_config.json", detail::preprocessor_config_json(spec));
  }
  if (spec.tokenizer_from) {
    const CopiedTokenizer copied = read_copied_tokenizer(spec);
    RandomModelSpec sized = spec;
    if (sized.vocab == 0) sized.vocab = copied.tokens;
    if (sized.vocab < copied.tokens) {
      throw std::invalid_argument("vocab: " + std::to_string(sized.vocab) +
                                  " rows are fewer than " + std::to_string(copied.tokens) +
                                  " tokens of " + spec.tokenizer_from->string());
    }
    for (const char* name : kTokenizerFiles) {
      if (fs::exists(*spec.tokenizer_from / name)) {
        fs::copy_file(*spec.tokenizer_from / name, dir / name);
      }
    }
    write_text(dir / "config.json", detail::config_json(sized, copied.ids));
    detail::write_processor_files(sized, dir);
    if (spec.architecture == "qwen2_5_vl") {
      write_text(dir / "chat_template.jinja", detail::qwen2_5_vl_chat_template());
    }
    if (!fs::exists(dir / "generation_config.json")) {
      write_text(dir / "generation_config.json", detail::generation_config_json(copied.ids));
    }
    return write_tensors(sized, dir);
  }
  write_text(dir / "config.json", detail::config_json(spec));
  detail::write_processor_files(spec, dir);
  write_text(dir / "generation_config.json",
             detail::generation_config_json(detail::special_ids(spec)));
  write_text(dir / "tokenizer_config.json", detail::tokenizer_config_json(spec));
  train_tokenizer(std::string(default_training_corpus()), spec.resolved_tokenizer_vocab(),
                  dir / "tokenizer.model", spec.seed);
  return write_tensors(spec, dir);
}

}  // namespace

WrittenModel write_random_model(const RandomModelSpec& spec, const fs::path& out_dir) {
  validate(spec);
  const fs::path target = target_of(out_dir);
  check_target(out_dir, target);
  fs::create_directories(target.parent_path());

  WrittenModel written;
  const fs::path staging = make_staging_directory(target);
  try {
    written.tensors = write_files(spec, staging);
    // rename() replaces an empty directory, and fails if another process
    // filled it in the meantime.
    fs::rename(staging, target);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(staging, ignored);
    throw;
  }

  for (const fs::directory_entry& entry : fs::directory_iterator(target)) {
    written.files.push_back(entry.path());
    written.total_bytes += entry.file_size();
  }
  std::sort(written.files.begin(), written.files.end());
  return written;
}

}  // namespace quire::engine::modelgen
