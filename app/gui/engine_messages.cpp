#include "engine_messages.h"

#include "quire/ui/memory_view_data.h"

namespace quire::gui {
namespace {

// The engine's messages end without a full stop ("... is cut short"); the
// advice after them is a sentence of its own.
QString as_sentence(const QString& text) {
  if (text.isEmpty()) return text;
  const QChar last = text.back();
  if (last == u'.' || last == u'!' || last == u'?' || last == u'…') return text;
  return text + u'.';
}

}  // namespace

QString EngineFailure::text() const {
  QString out = title;
  if (!detail.isEmpty()) out += (out.isEmpty() ? QString() : QStringLiteral(": ")) + detail;
  if (!advice.isEmpty()) out = out.isEmpty() ? advice : as_sentence(out) + u' ' + advice;
  return out;
}

void EngineFailure::addAdvice(const QString& sentence) {
  advice = advice.isEmpty() ? sentence : as_sentence(advice) + u' ' + sentence;
}

void register_engine_message_types() {
  qRegisterMetaType<DiskCacheRequest>("quire::gui::DiskCacheRequest");
  qRegisterMetaType<LoadRequest>("quire::gui::LoadRequest");
  qRegisterMetaType<ModelInfo>("quire::gui::ModelInfo");
  qRegisterMetaType<EngineFailure>("quire::gui::EngineFailure");
  qRegisterMetaType<ReplyRequest>("quire::gui::ReplyRequest");
  qRegisterMetaType<ReplyOutcome>("quire::gui::ReplyOutcome");
  qRegisterMetaType<ui::ServerSettings>("quire::ui::ServerSettings");
  qRegisterMetaType<ui::DraftDefaults>("quire::ui::DraftDefaults");
  qRegisterMetaType<ui::ServerStatusView>("quire::ui::ServerStatusView");
  ui::registerMemoryViewMetaTypes();
}

}  // namespace quire::gui
