#pragma once

#include <QString>

#include "chat_style.h"

class QLabel;
class QToolButton;

namespace quire::ui {

class DocumentView;

// One fenced code block of a reply: a header with the language and a Copy
// button, over the code in the system's monospace font on a tinted background.
// Copy puts exactly the code on the clipboard, without fences or language.
class CodeBlockWidget : public TintedFrame {
  Q_OBJECT

 public:
  explicit CodeBlockWidget(QWidget* parent = nullptr);

  QString code() const { return code_; }
  QString language() const { return language_; }
  // Streaming appends only the new tail to the document when the old code is
  // a prefix of the new, so a growing block is not re-laid out from the top.
  void setCode(const QString& code, const QString& language);
  void copyToClipboard();

 private:
  QString code_;
  QString language_;
  QLabel* languageLabel_ = nullptr;
  QToolButton* copyButton_ = nullptr;
  DocumentView* view_ = nullptr;
};

}  // namespace quire::ui
