#pragma once

#include <QWidget>

class QLabel;
class QToolButton;

namespace quire::ui {

// "‹ 2/3 ›" under a message that has other versions (an edited question, a
// regenerated reply): the arrows ask for the neighbouring version, the label
// says which one is on show. It changes nothing itself; the chat view passes
// the step on and the app answers by showing the other branch.
//
// Object names: "branchSwitcher", "previousBranchButton", "branchPosition",
// "nextBranchButton".
class BranchSwitcher : public QWidget {
  Q_OBJECT

 public:
  explicit BranchSwitcher(QWidget* parent = nullptr);

  // `index` counts from 0. With fewer than two versions there is nothing to
  // switch to and the switcher hides.
  void setPosition(int index, int count);
  int index() const { return index_; }
  int count() const { return count_; }

 signals:
  // -1 for the previous version, +1 for the next.
  void stepRequested(int step);

 private:
  int index_ = 0;
  int count_ = 1;
  QToolButton* previous_ = nullptr;
  QLabel* position_ = nullptr;
  QToolButton* next_ = nullptr;
};

}  // namespace quire::ui
