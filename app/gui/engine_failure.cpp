#include "engine_failure.h"

#include <new>

#include "backend_choice.h"
#include "quire/engine/model_error.h"
#include "quire/engine/runtime/loaded_model.h"
#include "quire/kernels/backend.h"

namespace quire::gui {
namespace {

EngineFailure make(EngineFailure::Kind kind, const QString& title, const QString& detail,
                   const QString& advice) {
  return EngineFailure{kind, title, detail, advice};
}

QString what(const std::exception& error) {
  return QString::fromStdString(error.what());
}

}  // namespace

EngineFailure no_model_failure() {
  return make(EngineFailure::Kind::NoModel, QStringLiteral("No model is chosen"), QString(),
              QStringLiteral("Choose a model folder in Settings, or use the demo model."));
}

EngineFailure missing_folder_failure(const QString& directory) {
  return make(EngineFailure::Kind::NoModel, QStringLiteral("The model folder does not exist"),
              directory,
              QStringLiteral("Choose another folder in Settings; it may have been moved or "
                             "be on a drive that is not mounted."));
}

EngineFailure does_not_fit_failure(const engine::PlacementPlan& plan) {
  return make(EngineFailure::Kind::DoesNotFit, QStringLiteral("The model does not fit"),
              QString::fromStdString(plan.problem),
              QStringLiteral("In Settings, choose a smaller cache format (Q4 or Q6), fewer cache "
                             "tokens or another split; the plan beside the fields shows what "
                             "fits before anything is loaded."));
}

EngineFailure failure_from(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const engine::LoadCancelled&) {
    return make(EngineFailure::Kind::Cancelled, QStringLiteral("Loading was cancelled"), QString(),
                QString());
  } catch (const BackendUnavailable& failure) {
    return make(EngineFailure::Kind::Other, QStringLiteral("The backend cannot be used"),
                what(failure), QString());
  } catch (const kernels::DeviceOutOfMemory& failure) {
    return make(EngineFailure::Kind::OutOfMemory, QStringLiteral("A device ran out of memory"),
                what(failure),
                QStringLiteral("Close other programs that use it, or lower the cache size or "
                               "choose a smaller cache format in Settings."));
  } catch (const std::bad_alloc&) {
    return make(EngineFailure::Kind::OutOfMemory, QStringLiteral("The computer ran out of memory"),
                QString(),
                QStringLiteral("Close other programs, or choose a smaller model, cache size or "
                               "host cache in Settings."));
  } catch (const engine::ModelError& failure) {
    return make(EngineFailure::Kind::CorruptFiles, QStringLiteral("The model cannot be used"),
                what(failure),
                QStringLiteral("Check that the folder holds a complete model (config.json, "
                               "tokenizer.model and its .safetensors files); download it again "
                               "if a file is damaged."));
  } catch (const std::exception& failure) {
    return make(EngineFailure::Kind::Other, QStringLiteral("Something went wrong"), what(failure),
                QString());
  } catch (...) {
    return make(EngineFailure::Kind::Other, QStringLiteral("Something went wrong"),
                QStringLiteral("an unknown error"), QString());
  }
}

}  // namespace quire::gui
