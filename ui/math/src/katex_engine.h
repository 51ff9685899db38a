#pragma once

#include <QString>
#include <memory>

#include "quire/ui/math_renderer.h"

class QJSEngine;

namespace quire::ui {

// KaTeX run in Qt's JavaScript engine (no QML scene, no web view). The script
// is read and evaluated on the first conversion; a missing or broken script
// makes every conversion fail with the reason, logged once.
class KatexEngine {
 public:
  // The script Debian's libjs-katex installs; QUIRE_KATEX_JS overrides it.
  static QString defaultScriptPath();

  explicit KatexEngine(QString scriptPath = defaultScriptPath());
  ~KatexEngine();
  KatexEngine(const KatexEngine&) = delete;
  KatexEngine& operator=(const KatexEngine&) = delete;

  // The <math> element KaTeX makes of `tex`, or its parse error.
  MathResult<QString> toMathML(const QString& tex, bool display);

 private:
  bool load();

  QString scriptPath_;
  std::unique_ptr<QJSEngine> engine_;
  bool loaded_ = false;
  QString loadError_;  // set once loading failed; not retried
};

}  // namespace quire::ui
