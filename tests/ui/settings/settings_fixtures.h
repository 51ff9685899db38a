#pragma once

// Settings and plans the settings tests share, with numbers chosen so every
// line of text they produce can be written down in the tests.

#include <QString>
#include <QStringList>

#include "quire/ui/settings_data.h"

class QWidget;

namespace quire::ui::test {

inline constexpr qint64 kMiB = qint64{1} << 20;
inline constexpr qint64 kGiB = qint64{1} << 30;

// Two 24 GB GPUs, as the application would name them.
QStringList two_gpus();

// Every field away from its default and representable by the panel's fields.
// `model_directory` should exist, so the settings validate.
EngineSettings sample_settings(const QString& model_directory);

// Both devices used, the plan fits.
PlanView fitting_plan();
// Device 1 overflows by 4140 MiB (reserve included).
PlanView overflowing_plan();
QString overflow_verdict();

// Grabs `widget` into $QUIRE_SCREENSHOT_DIR/<file_name> when that is set.
void save_screenshot(QWidget& widget, const QString& file_name);

}  // namespace quire::ui::test

namespace quire::ui {
// Found by QCOMPARE through argument-dependent lookup: a failed comparison of
// settings prints both sides.
char* toString(const EngineSettings& settings);
}  // namespace quire::ui
