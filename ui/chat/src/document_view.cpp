#include "document_view.h"

#include <QAbstractTextDocumentLayout>
#include <QDesktopServices>
#include <QMimeData>
#include <QScrollBar>
#include <QtMath>

#include "markdown_math.h"

namespace quire::ui {

DocumentView::DocumentView(QWidget* parent) : QTextBrowser(parent) {
  setFrameShape(QFrame::NoFrame);
  setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
  setTextInteractionFlags(Qt::TextBrowserInteraction | Qt::TextSelectableByKeyboard);
  setFocusPolicy(Qt::StrongFocus);
  setUndoRedoEnabled(false);
  // The bubble behind the view paints the background.
  setAutoFillBackground(false);
  viewport()->setAutoFillBackground(false);
  document()->setDocumentMargin(2);

  // Links go to the desktop, never into this view (which has no history).
  setOpenLinks(false);
  connect(this, &QTextBrowser::anchorClicked, this, [](const QUrl& url) {
    const QString scheme = url.scheme();
    if (scheme == u"http" || scheme == u"https" || scheme == u"mailto")
      QDesktopServices::openUrl(url);
  });

  connect(document()->documentLayout(), &QAbstractTextDocumentLayout::documentSizeChanged, this,
          &DocumentView::fitHeight);
  connect(horizontalScrollBar(), &QScrollBar::rangeChanged, this, &DocumentView::fitHeight);
}

void DocumentView::setWrapping(bool wrap) {
  setLineWrapMode(wrap ? QTextEdit::WidgetWidth : QTextEdit::NoWrap);
  setHorizontalScrollBarPolicy(wrap ? Qt::ScrollBarAlwaysOff : Qt::ScrollBarAsNeeded);
  fitHeight();
}

void DocumentView::setPreferredWidth(int width) {
  if (preferredWidth_ == width) return;
  preferredWidth_ = width;
  updateGeometry();
}

QSize DocumentView::sizeHint() const {
  const int width = preferredWidth_ > 0 ? preferredWidth_ : QTextBrowser::sizeHint().width();
  return {width, height()};
}

QSize DocumentView::minimumSizeHint() const {
  return {48, height()};
}

QVariant DocumentView::loadResource(int, const QUrl&) {
  return {};
}

QMimeData* DocumentView::createMimeDataFromSelection() const {
  const QTextCursor selection = textCursor();
  if (!selection.selectedText().contains(QChar::ObjectReplacementCharacter))
    return QTextBrowser::createMimeDataFromSelection();
  // Rich text would carry the formulas as images of an internal name that
  // no other program can load: plain text with their sources instead.
  auto* mime = new QMimeData;
  mime->setText(selectionSource(selection));
  return mime;
}

void DocumentView::resizeEvent(QResizeEvent* event) {
  QTextBrowser::resizeEvent(event);
  fitHeight();
}

void DocumentView::fitHeight() {
  const QMargins margins = contentsMargins();
  int wanted = qCeil(document()->size().height()) + margins.top() + margins.bottom();
  if (horizontalScrollBarPolicy() != Qt::ScrollBarAlwaysOff && horizontalScrollBar()->maximum() > 0)
    wanted += horizontalScrollBar()->sizeHint().height();
  if (wanted != minimumHeight() || wanted != maximumHeight()) setFixedHeight(wanted);
}

}  // namespace quire::ui
