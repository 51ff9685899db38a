#pragma once

#include <QTextBrowser>

namespace quire::ui {

// A read-only text view that is exactly as tall as its document, so that a
// message shows whole inside the conversation's single scroll area instead of
// scrolling on its own. Text can be selected with mouse and keyboard and copied
// with the platform's Copy shortcut; links open in the desktop's browser.
// Code views keep lines unwrapped and scroll sideways.
class DocumentView : public QTextBrowser {
  Q_OBJECT

 public:
  explicit DocumentView(QWidget* parent = nullptr);

  // Off for code: lines keep their length and a horizontal scroll bar appears.
  void setWrapping(bool wrap);
  // The width asked of the layout (0: as wide as it gets). Used for user
  // bubbles, which shrink to their text.
  void setPreferredWidth(int width);

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

  // Resources named by the text (images in Markdown) are never loaded: a
  // model's reply must not make the app read local files or the network.
  QVariant loadResource(int type, const QUrl& name) override;

 protected:
  // Copy and drag give formulas as their LaTeX source, not as images.
  QMimeData* createMimeDataFromSelection() const override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  void fitHeight();

  int preferredWidth_ = 0;
};

}  // namespace quire::ui
