#pragma once

#include <QString>
#include <QWidget>
#include <map>
#include <set>
#include <vector>

class QLabel;

namespace quire::ui {

class ContextGauge;

// One compact line under the conversation: the model, its devices, the cache
// format, how the last reply went (tokens per second, time to first token,
// tokens reused from the cache) and how full this chat's context is. Every
// item has a tooltip saying what it means. Setters take plain values; an
// empty string or a negative number hides the item. When the line is too
// narrow, whole items give way with their separators (the last reply's
// figures first, then the devices and the cache format), the model name ends
// in "…" and goes when too little of it would be left; the gauge goes last.
//
// Object names: "modelLabel", "devicesLabel", "cacheLabel", "speedLabel",
// "firstTokenLabel", "reusedLabel", "contextGauge".
class StatusLine : public QWidget {
  Q_OBJECT

 public:
  enum class FillLevel { Normal, Warning, Critical };
  // The gauge turns amber, then red, from these shares of the context.
  static constexpr double kWarningFill = 0.75;
  static constexpr double kCriticalFill = 0.90;
  // Characters, "…" included, below which a shortened model name is dropped.
  static constexpr int kShortestModelName = 4;

  explicit StatusLine(QWidget* parent = nullptr);

  // Empty: "No model loaded".
  void setModelName(const QString& name);
  // As the app words it, e.g. "2 × H100 (cuda:0, cuda:1)".
  void setDevices(const QString& devices);
  // "FP16", "Q8", "Q6", "Q4", "FP8".
  void setCacheFormat(const QString& format);
  void setTokensPerSecond(double tokensPerSecond);
  void setTimeToFirstToken(double seconds);
  // Tokens of the last prompt found in the cache; of `promptTokens` if known.
  void setReusedTokens(qint64 reused, qint64 promptTokens = -1);
  // Hides the three items about the last reply (a new chat, a new model).
  void clearLastReply();
  // Tokens of the context window in use by this chat, of `maximum`. Clears
  // the drop (setContextDrop).
  void setContextFill(qint64 used, qint64 maximum);
  // What sending the next message would do to the context: tokens [from, to)
  // of the fill are marked on the gauge as going, and `description` ("Sending
  // now drops turns 1–3 (1,840 tokens) …") joins its tooltip. An empty
  // description and from == to: nothing goes.
  struct ContextDrop {
    qint64 from = 0;
    qint64 to = 0;
    QString description;
  };
  void setContextDrop(const ContextDrop& drop);
  const ContextDrop& contextDrop() const { return contextDrop_; }

  // The item's whole text (a label may show it shortened); empty when unset.
  QString itemText(const QString& objectName) const;

  qint64 contextUsed() const { return contextUsed_; }
  qint64 contextMaximum() const { return contextMaximum_; }
  // used / maximum, clamped to [0, 1]; 0 without a maximum.
  double contextFraction() const;
  FillLevel contextLevel() const;
  QSize minimumSizeHint() const override;

 private:
  QLabel* addItem(const char* name, const QString& tip);
  void setItem(QLabel* label, const QString& text);
  void refreshSeparators();
  void refreshGaugeTip();
  // Shows the items that fit the width, in priority order.
  void fitItems();
  // Width the line needs with the items in `hidden` left out.
  int widthWithout(const std::set<const QWidget*>& hidden) const;

 protected:
  void resizeEvent(QResizeEvent* event) override;
  void showEvent(QShowEvent* event) override;

 private:
  struct Item {
    QLabel* separator;
    QWidget* widget;
  };
  std::vector<Item> items_;
  std::map<QLabel*, QString> texts_;  // whole texts of the labels
  QLabel* model_ = nullptr;
  QLabel* devices_ = nullptr;
  QLabel* cache_ = nullptr;
  QLabel* speed_ = nullptr;
  QLabel* firstToken_ = nullptr;
  QLabel* reused_ = nullptr;
  ContextGauge* gauge_ = nullptr;
  qint64 contextUsed_ = 0;
  qint64 contextMaximum_ = 0;
  ContextDrop contextDrop_;
};

}  // namespace quire::ui
