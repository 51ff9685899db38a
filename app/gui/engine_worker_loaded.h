#pragma once

// What the engine worker holds while a model is loaded, shared by the files
// that make up EngineWorker (engine_worker.cpp, engine_worker_load.cpp, engine_worker_server.cpp,
// engine_worker_disk.cpp).

#include <QString>
#include <map>
#include <memory>

#include "conversation_book.h"
#include "engine_worker.h"
#include "quire/engine/generator/chat_format.h"
#include "quire/engine/generator/draft_model.h"
#include "quire/engine/generator/generator.h"
#include "quire/engine/runtime/model_description.h"
#include "quire/engine/runtime/model_runtime.h"
#include "quire/engine/tokenizer/tokenizer.h"
#include "quire/kernels/backend.h"

namespace quire::gui {

// The model's chat template, or a built-in format, for a chat's format
// setting; a setting that cannot be followed falls back as "auto" does and
// says so in the choice's notice.
engine::FormatChoice format_for_chat(const QString& directory, const QString& name);

// Declared in the order they are built; destroyed in reverse, so the
// generator goes before the runtime it steps and the backend goes last.
struct EngineWorker::Loaded {
  std::unique_ptr<kernels::Backend> backend;
  std::shared_ptr<const engine::ModelDescription> model;
  std::unique_ptr<engine::Tokenizer> tokenizer;
  std::unique_ptr<engine::ModelRuntime> runtime;
  // The draft model (Settings → Speculative decoding), when one loaded.
  std::unique_ptr<engine::LoadedDraftModel> draft;
  // The model's vision side, when it has one whose images Quire gives to
  // the model; the books and the server prepare images with it.
  std::shared_ptr<engine::ImagePreparer> images;
  // The book of each prompt format setting in use ("auto", "chatml", ...): a
  // chat may set its own, and chats of different formats generate together.
  std::map<QString, std::unique_ptr<ConversationBook>> books;
  std::unique_ptr<engine::Generator> generator;
  engine::GeneratorConfig generator_config;
  ModelInfo info;
  // What it was loaded with: a switch to another model that fails loads it
  // again from this.
  LoadRequest request;
};

}  // namespace quire::gui
