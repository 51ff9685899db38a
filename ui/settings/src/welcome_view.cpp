#include "quire/ui/welcome_view.h"

#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include "quire/ui/plan_widget.h"

namespace quire::ui {

WelcomeView::WelcomeView(QWidget* parent) : QWidget(parent) {
  auto* outer = new QHBoxLayout(this);
  auto* column = new QVBoxLayout;
  outer->addStretch(1);
  outer->addLayout(column, 4);
  outer->addStretch(1);

  auto* title = new QLabel(tr("Welcome to Quire"), this);
  title->setObjectName(QStringLiteral("welcomeTitle"));
  QFont big = title->font();
  big.setPointSizeF(big.pointSizeF() * 1.6);
  big.setBold(true);
  title->setFont(big);
  column->addStretch(1);
  column->addWidget(title);

  auto* intro = new QLabel(this);
  intro->setObjectName(QStringLiteral("welcomeText"));
  intro->setWordWrap(true);
  intro->setText(
      tr("Quire runs a language model on this computer: it needs a model directory from "
         "Hugging Face in EXL3, EXL2, GPTQ, AWQ, W4A16, FP8 or FP16 safetensors form. Choose "
         "the folder, or get one with Get models, and Quire "
         "shows, before loading anything, how the model and its cache fit on your devices. "
         "The demo model is a 5.8M-parameter demonstration, only for trying Quire out: its "
         "replies are often odd English."));
  column->addWidget(intro);

  column->addSpacing(8);
  auto* buttons = new QHBoxLayout;
  auto* choose = new QPushButton(tr("Choose model folder…"), this);
  choose->setObjectName(QStringLiteral("chooseModelButton"));
  connect(choose, &QPushButton::clicked, this, &WelcomeView::chooseModelRequested);
  auto* get = new QPushButton(tr("Get models…"), this);
  get->setObjectName(QStringLiteral("getModelsButton"));
  get->setToolTip(tr("Search Hugging Face and download a model that fits this computer"));
  connect(get, &QPushButton::clicked, this, &WelcomeView::getModelsRequested);
  demo_ = new QPushButton(tr("Try the 5.8M-parameter demo model"), this);
  demo_->setObjectName(QStringLiteral("demoModelButton"));
  demo_->setToolTip(
      tr("A 5.8M-parameter demonstration model shipped with Quire: it shows how everything "
         "works, and its replies are often odd English. For real answers, download a model "
         "from Hugging Face and choose its folder."));
  connect(demo_, &QPushButton::clicked, this, &WelcomeView::useDemoModelRequested);
  buttons->addWidget(get);
  buttons->addWidget(choose);
  buttons->addStretch(1);
  column->addLayout(buttons);
  // The demo on a line of its own: three buttons in a row would widen the
  // window's narrowest size.
  auto* demo_row = new QHBoxLayout;
  demo_row->addWidget(demo_);
  demo_row->addStretch(1);
  column->addLayout(demo_row);

  auto* box = new QGroupBox(tr("Before loading"), this);
  plan_box_ = box;
  plan_box_->setObjectName(QStringLiteral("welcomePlan"));
  auto* box_layout = new QVBoxLayout(box);
  chosen_ = new QLabel(box);
  chosen_->setObjectName(QStringLiteral("chosenModel"));
  chosen_->setWordWrap(true);
  chosen_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  box_layout->addWidget(chosen_);
  plan_widget_ = new PlanWidget(box);
  plan_widget_->setObjectName(QStringLiteral("plan"));
  box_layout->addWidget(plan_widget_);
  auto* load_row = new QHBoxLayout;
  load_row->addStretch(1);
  load_ = new QPushButton(tr("Load"), box);
  load_->setObjectName(QStringLiteral("loadButton"));
  load_->setDefault(true);
  connect(load_, &QPushButton::clicked, this, &WelcomeView::loadRequested);
  load_row->addWidget(load_);
  box_layout->addLayout(load_row);
  column->addWidget(plan_box_);
  column->addStretch(2);

  refresh();
}

void WelcomeView::setDemoAvailable(bool available) {
  demo_available_ = available;
  refresh();
}

void WelcomeView::setModelDirectory(const QString& path) {
  model_directory_ = path;
  refresh();
}

void WelcomeView::setPlan(const PlanView& plan) {
  plan_ = plan;
  plan_widget_->setPlan(plan);
  refresh();
}

void WelcomeView::refresh() {
  demo_->setVisible(demo_available_);
  plan_box_->setVisible(!model_directory_.isEmpty());
  chosen_->setText(tr("Model folder: %1").arg(model_directory_));
  // Loading what the planner says does not fit would only fail later, after
  // reading gigabytes; the verdict above says what to change instead.
  load_->setEnabled(!model_directory_.isEmpty() && plan_.valid && plan_.fits);
}

}  // namespace quire::ui
