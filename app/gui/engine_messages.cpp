#include "engine_messages.h"

#include "quire/ui/memory_view_data.h"

namespace quire::gui {

QString EngineFailure::text() const {
  QString out = title;
  if (!detail.isEmpty()) out += (out.isEmpty() ? QString() : QStringLiteral(": ")) + detail;
  if (!advice.isEmpty()) out += (out.isEmpty() ? QString() : QStringLiteral(" ")) + advice;
  return out;
}

void register_engine_message_types() {
  qRegisterMetaType<LoadRequest>("quire::gui::LoadRequest");
  qRegisterMetaType<ModelInfo>("quire::gui::ModelInfo");
  qRegisterMetaType<EngineFailure>("quire::gui::EngineFailure");
  qRegisterMetaType<ReplyRequest>("quire::gui::ReplyRequest");
  qRegisterMetaType<ReplyOutcome>("quire::gui::ReplyOutcome");
  ui::registerMemoryViewMetaTypes();
}

}  // namespace quire::gui
