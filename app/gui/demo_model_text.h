#pragma once

// What the window says while the bundled demo model is loaded: that it is a
// tiny demonstration model whose odd replies are expected, and how to open a
// real one.

#include <QString>
#include <QtGlobal>

namespace quire::gui {

// The source tree's resources/demo-model/<variant> or an installation's
// share/quire/demo-model.
bool is_demo_model(const QString& directory);

// "Demo model (5.8M parameters)".
QString demo_model_name(qint64 parameters);

// The empty chat's title and hint while the demo model is loaded.
QString demo_chat_title();
QString demo_chat_hint();

}  // namespace quire::gui
