#include "demo_model_text.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

namespace quire::gui {

bool is_demo_model(const QString& directory) {
  const QFileInfo folder(QDir::cleanPath(directory));
  const QString demo = QStringLiteral("demo-model");
  return folder.fileName() == demo || folder.dir().dirName() == demo;
}

QString demo_model_name(qint64 parameters) {
  const double millions = static_cast<double>(parameters) / 1e6;
  return QCoreApplication::translate("quire", "Demo model (%1M parameters)")
      .arg(millions, 0, 'f', 1);
}

QString demo_chat_title() {
  return QCoreApplication::translate("quire", "Chatting with the demo model");
}

QString demo_chat_hint() {
  return QCoreApplication::translate(
      "quire",
      "This is a 5.8M-parameter demonstration model: it shows how Quire works, and its "
      "replies are often odd English.\nTo chat with a real model, download one from Hugging "
      "Face (EXL3, EXL2, GPTQ, AWQ, W4A16, FP8 or FP16 safetensors) and choose its folder in "
      "Model ▸ Settings….");
}

}  // namespace quire::gui
