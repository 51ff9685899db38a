#include "code_block_widget.h"

#include <QClipboard>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QTextCursor>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include "document_view.h"

namespace quire::ui {
namespace {
constexpr int kCopiedFeedbackMs = 1500;
}

CodeBlockWidget::CodeBlockWidget(QWidget* parent) : TintedFrame(Tint::Code, parent) {
  setObjectName(QStringLiteral("codeBlock"));
  setRadius(8);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(1, 1, 1, 1);
  layout->setSpacing(0);

  auto* header = new TintedFrame(Tint::CodeHeader, this);
  header->setRadius(7);
  auto* headerLayout = new QHBoxLayout(header);
  headerLayout->setContentsMargins(10, 2, 4, 2);
  languageLabel_ = new QLabel(header);
  useMutedText(languageLabel_);
  scaleFont(languageLabel_, 0.9);
  copyButton_ = new QToolButton(header);
  copyButton_->setObjectName(QStringLiteral("copyCodeButton"));
  copyButton_->setText(tr("Copy"));
  copyButton_->setToolTip(tr("Copy this code to the clipboard"));
  copyButton_->setAccessibleName(tr("Copy code"));
  copyButton_->setAutoRaise(true);
  copyButton_->setCursor(Qt::PointingHandCursor);
  headerLayout->addWidget(languageLabel_);
  headerLayout->addStretch(1);
  headerLayout->addWidget(copyButton_);
  layout->addWidget(header);

  view_ = new DocumentView(this);
  view_->setObjectName(QStringLiteral("codeText"));
  view_->setAccessibleName(tr("Code"));
  view_->setWrapping(false);
  const QFont mono = monospaceFont();
  view_->setFont(mono);
  view_->document()->setDefaultFont(mono);
  view_->document()->setDocumentMargin(10);
  view_->setTabStopDistance(QFontMetricsF(mono).horizontalAdvance(u' ') * 4);
  layout->addWidget(view_);

  connect(copyButton_, &QToolButton::clicked, this, &CodeBlockWidget::copyToClipboard);
}

void CodeBlockWidget::setCode(const QString& code, const QString& language) {
  if (language != language_) {
    language_ = language;
    languageLabel_->setText(language.isEmpty() ? tr("code") : language);
  }
  if (code == code_) return;
  if (!code_.isEmpty() && code.startsWith(code_)) {
    QTextCursor cursor(view_->document());
    cursor.movePosition(QTextCursor::End);
    cursor.insertText(code.mid(code_.size()));
  } else {
    view_->setPlainText(code);
  }
  code_ = code;
}

void CodeBlockWidget::copyToClipboard() {
  QGuiApplication::clipboard()->setText(code_);
  copyButton_->setText(tr("Copied"));
  QTimer::singleShot(kCopiedFeedbackMs, copyButton_,
                     [button = copyButton_] { button->setText(CodeBlockWidget::tr("Copy")); });
}

}  // namespace quire::ui
