#pragma once

// What the window shows while no model is configured: what Quire needs, a way
// to choose a model folder or the bundled demo model, and the planner's verdict
// for the chosen folder before anything is loaded.

#include <QWidget>

#include "quire/ui/settings_data.h"

class QLabel;
class QPushButton;

namespace quire::ui {

class PlanWidget;

class WelcomeView : public QWidget {
  Q_OBJECT

 public:
  explicit WelcomeView(QWidget* parent = nullptr);

  // Hides "Use the demo model" when the installation has none.
  void setDemoAvailable(bool available);
  bool isDemoAvailable() const { return demo_available_; }
  // The folder the verdict below is for; "" hides the plan and Load.
  void setModelDirectory(const QString& path);
  QString modelDirectory() const { return model_directory_; }
  // The planner's verdict for that folder; Load is enabled only when it fits.
  void setPlan(const PlanView& plan);

 signals:
  void chooseModelRequested();
  void getModelsRequested();
  void useDemoModelRequested();
  void loadRequested();

 private:
  void refresh();

  bool demo_available_ = true;
  QString model_directory_;
  PlanView plan_;
  QPushButton* demo_ = nullptr;
  QLabel* chosen_ = nullptr;
  QWidget* plan_box_ = nullptr;
  PlanWidget* plan_widget_ = nullptr;
  QPushButton* load_ = nullptr;
};

}  // namespace quire::ui
