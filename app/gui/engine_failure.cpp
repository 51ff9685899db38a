#include "engine_failure.h"

#include <QDir>
#include <QFileInfo>
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

std::optional<EngineFailure> model_folder_failure(const QString& directory) {
  if (directory.trimmed().isEmpty()) return no_model_failure();
  if (!QFileInfo(directory).isDir()) return missing_folder_failure(directory);
  const QDir folder(directory);
  const QString name = QDir::toNativeSeparators(QDir::cleanPath(directory));
  if (!folder.exists(QStringLiteral("config.json"))) {
    return make(EngineFailure::Kind::NoModel, QStringLiteral("%1 is not a model folder").arg(name),
                QStringLiteral("it has no config.json"),
                QStringLiteral("Choose the folder that holds the model's config.json, its "
                               ".safetensors weights and its tokenizer (tokenizer.json or "
                               "tokenizer.model)."));
  }
  const QStringList weights = folder.entryList(
      {QStringLiteral("*.safetensors"), QStringLiteral("*.safetensors.index.json")}, QDir::Files);
  if (weights.isEmpty()) {
    return make(EngineFailure::Kind::NoModel, QStringLiteral("%1 holds no model weights").arg(name),
                QStringLiteral("it has a config.json but no .safetensors files"),
                QStringLiteral("Choose the folder with the model's weights, or finish "
                               "downloading them."));
  }
  if (!folder.exists(QStringLiteral("tokenizer.json")) &&
      !folder.exists(QStringLiteral("tokenizer.model"))) {
    return make(EngineFailure::Kind::CorruptFiles, QStringLiteral("%1 has no tokenizer").arg(name),
                QStringLiteral("it has no tokenizer.json or tokenizer.model"),
                QStringLiteral("Copy the model's tokenizer files into the folder, or download the "
                               "model again."));
  }
  return std::nullopt;
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
  } catch (const EngineFailure& failure) {
    return failure;
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
    // The engine's message names the file, the problem and the remedy; a
    // general remedy after it ("download it again") would be wrong as often
    // as right.
    return make(EngineFailure::Kind::CorruptFiles, QStringLiteral("The model cannot be used"),
                what(failure), QString());
  } catch (const std::exception& failure) {
    return make(EngineFailure::Kind::Other, QStringLiteral("Something went wrong"), what(failure),
                QString());
  } catch (...) {
    return make(EngineFailure::Kind::Other, QStringLiteral("Something went wrong"),
                QStringLiteral("an unknown error"), QString());
  }
}

}  // namespace quire::gui
