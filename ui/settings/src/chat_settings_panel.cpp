#include "quire/ui/chat_settings_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>

#include "quire/ui/context_overflow_choices.h"
#include "text_rules_editor.h"
#include "tuned_sampling_editor.h"
#include "wheel_guard.h"

namespace quire::ui {
namespace {

// A long system prompt is named by its start in the state line.
constexpr int kPromptPreviewChars = 60;

QString real_text(double value, RealRange range) {
  return QString::number(value, 'f', range.decimals);
}

QString prompt_preview(const QString& prompt) {
  QString line = prompt.simplified();
  if (line.isEmpty()) return ChatSettingsPanel::tr("none");
  if (line.size() > kPromptPreviewChars) line = line.left(kPromptPreviewChars - 1) + u'…';
  return QStringLiteral("“%1”").arg(line);
}

QDoubleSpinBox* real_editor(RealRange range, double step, QWidget* parent) {
  auto* box = new QDoubleSpinBox(parent);
  box->setDecimals(range.decimals);
  box->setRange(range.min, range.max);
  box->setSingleStep(step);
  return box;
}

// Selects the item holding `data`, adding one for a value the list lacks (a
// format a chat kept from a build that offered it) rather than showing
// another.
void select_data(QComboBox* box, const QString& data) {
  int index = box->findData(data);
  if (index < 0) {
    box->addItem(data, data);
    index = box->count() - 1;
  }
  box->setCurrentIndex(index);
}

}  // namespace

struct ChatSettingsPanel::Fields {
  struct Row {
    QCheckBox* own = nullptr;
    QWidget* editor = nullptr;
    QLabel* state = nullptr;
  };
  QPlainTextEdit* system_prompt = nullptr;
  QDoubleSpinBox* temperature = nullptr;
  QDoubleSpinBox* top_p = nullptr;
  QDoubleSpinBox* min_p = nullptr;
  QDoubleSpinBox* repetition_penalty = nullptr;
  QSpinBox* max_new_tokens = nullptr;
  QComboBox* prompt_format = nullptr;
  QCheckBox* use_tools = nullptr;
  TunedSamplingEditor* tuned = nullptr;
  QComboBox* context_overflow = nullptr;
  QList<Row> rows;  // in the order above
  TextRulesEditor* text_rules = nullptr;
  QPushButton* reset = nullptr;

  Row& row(const QWidget* editor) {
    return *std::find_if(rows.begin(), rows.end(),
                         [editor](const Row& row) { return row.editor == editor; });
  }
  bool owns(const QWidget* editor) const {
    return std::any_of(rows.begin(), rows.end(), [editor](const Row& row) {
      return row.editor == editor && row.own->isChecked();
    });
  }
};

ChatSettingsPanel::ChatSettingsPanel(QWidget* parent)
    : QWidget(parent), fields_(std::make_unique<Fields>()) {
  setObjectName(QStringLiteral("chatSettingsPanel"));
  Fields& f = *fields_;
  auto* layout = new QVBoxLayout(this);
  auto* intro = new QLabel(tr("A field marked “Own value” applies to this chat only; the others "
                              "follow the global settings."),
                           this);
  intro->setWordWrap(true);
  layout->addWidget(intro);
  auto* grid = new QGridLayout();
  layout->addLayout(grid);

  f.system_prompt = new QPlainTextEdit(this);
  f.system_prompt->setTabChangesFocus(true);
  f.system_prompt->setMinimumHeight(72);
  f.system_prompt->setPlaceholderText(tr("Instructions the model sees before this chat"));
  // A top-p of 0 would keep no token at all: the store refuses it.
  const double top_p_min = std::max(limits::kTopP.min, 0.01);
  f.temperature = real_editor(limits::kTemperature, 0.05, this);
  f.top_p = real_editor(limits::kTopP, 0.01, this);
  f.top_p->setMinimum(top_p_min);
  f.min_p = real_editor(limits::kMinP, 0.01, this);
  f.repetition_penalty = real_editor(limits::kRepetitionPenalty, 0.05, this);
  f.max_new_tokens = new QSpinBox(this);
  f.max_new_tokens->setRange(limits::kMaxNewTokens.min, limits::kMaxNewTokens.max);
  f.max_new_tokens->setGroupSeparatorShown(true);
  f.max_new_tokens->setSuffix(tr(" tokens"));
  f.prompt_format = new QComboBox(this);
  f.use_tools = new QCheckBox(tr("Use tools in this chat"), this);
  f.use_tools->setToolTip(
      tr("Offer the model the tools of the servers enabled in Settings → Tools; every call "
         "still waits for your approval"));
  f.tuned = new TunedSamplingEditor(this);
  f.context_overflow = new QComboBox(this);
  for (const QString& id : context_overflow_ids())
    f.context_overflow->addItem(context_overflow_label(id), id);
  f.context_overflow->setToolTip(context_overflow_explanation());

  const struct {
    QWidget* editor;
    QString name;
    QString label;
  } specs[] = {
      {f.system_prompt, QStringLiteral("chatSystemPrompt"), tr("System prompt")},
      {f.temperature, QStringLiteral("chatTemperature"), tr("Temperature")},
      {f.top_p, QStringLiteral("chatTopP"), tr("Top-p")},
      {f.min_p, QStringLiteral("chatMinP"), tr("Min-p")},
      {f.repetition_penalty, QStringLiteral("chatRepetitionPenalty"), tr("Repetition penalty")},
      {f.max_new_tokens, QStringLiteral("chatMaxNewTokens"), tr("Longest reply")},
      {f.prompt_format, QStringLiteral("chatPromptFormat"), tr("Prompt format")},
      {f.use_tools, QStringLiteral("chatUseTools"), tr("Tools")},
      {f.tuned, QStringLiteral("chatTunedSampling"), tr("Advanced sampling")},
      {f.context_overflow, QStringLiteral("chatContextOverflow"), tr("When the context fills")},
  };
  int line = 0;
  for (const auto& spec : specs) {
    Fields::Row row;
    row.editor = spec.editor;
    row.editor->setObjectName(spec.name);
    row.own = new QCheckBox(tr("Own value"), this);
    row.own->setObjectName(spec.name + QStringLiteral("Override"));
    row.state = new QLabel(this);
    row.state->setObjectName(spec.name + QStringLiteral("State"));
    row.state->setStyleSheet(QStringLiteral("color: palette(placeholder-text);"));
    row.state->setWordWrap(true);
    auto* label = new QLabel(spec.label, this);
    label->setBuddy(row.editor);
    grid->addWidget(label, line, 0, Qt::AlignTop);
    grid->addWidget(row.editor, line, 1);
    grid->addWidget(row.own, line, 2, Qt::AlignTop);
    grid->addWidget(row.state, line + 1, 1, 1, 2);
    line += 2;
    f.rows.append(row);

    connect(row.own, &QCheckBox::toggled, this, [this, editor = row.editor](bool own) {
      if (writing_) return;
      // Following again shows the global value; owning starts from it.
      if (!own) showDefaults();
      refreshStates();
      if (own) editor->setFocus();
      emit edited();
    });
  }
  grid->setColumnStretch(1, 1);
  f.text_rules = new TextRulesEditor(this);
  f.text_rules->setObjectName(QStringLiteral("chatTextRules"));
  layout->addWidget(f.text_rules);

  const auto changed = [this] {
    if (!writing_) emit edited();
  };
  connect(f.system_prompt, &QPlainTextEdit::textChanged, this, changed);
  for (QDoubleSpinBox* box : {f.temperature, f.top_p, f.min_p, f.repetition_penalty})
    connect(box, &QDoubleSpinBox::valueChanged, this, changed);
  connect(f.max_new_tokens, &QSpinBox::valueChanged, this, changed);
  connect(f.prompt_format, &QComboBox::currentIndexChanged, this, changed);
  connect(f.use_tools, &QCheckBox::toggled, this, changed);
  connect(f.tuned, &TunedSamplingEditor::changed, this, changed);
  connect(f.context_overflow, &QComboBox::currentIndexChanged, this, changed);
  connect(f.text_rules, &TextRulesEditor::changed, this, changed);

  f.reset = new QPushButton(tr("Reset to defaults"), this);
  f.reset->setObjectName(QStringLiteral("resetChatSettings"));
  f.reset->setToolTip(tr("Every field follows the global settings again"));
  connect(f.reset, &QPushButton::clicked, this, &ChatSettingsPanel::resetToDefaults);
  auto* buttons = new QHBoxLayout();
  buttons->addWidget(f.reset);
  buttons->addStretch();
  layout->addLayout(buttons);
  layout->addStretch();
  setPromptFormats({});
  // As in the global settings: a field the pointer passes over while the
  // wheel scrolls must not change, and the dialog would save the change.
  guard_wheel_in(this);
}

ChatSettingsPanel::~ChatSettingsPanel() = default;

void ChatSettingsPanel::setPromptFormats(const QStringList& names) {
  QComboBox* box = fields_->prompt_format;
  const QString current = box->currentData().toString();
  writing_ = true;
  box->clear();
  box->addItem(tr("Automatic (from the model)"), QStringLiteral("auto"));
  for (const QString& name : names) {
    if (name != QLatin1String("auto")) box->addItem(name, name);
  }
  select_data(box, current.isEmpty() ? QStringLiteral("auto") : current);
  writing_ = false;
  refreshStates();
}

void ChatSettingsPanel::setDefaults(const ChatDefaults& defaults) {
  defaults_ = defaults;
  writing_ = true;
  showDefaults();
  writing_ = false;
  refreshStates();
}

void ChatSettingsPanel::showDefaults() {
  Fields& f = *fields_;
  const bool was_writing = writing_;
  writing_ = true;
  if (!f.owns(f.system_prompt)) f.system_prompt->setPlainText(defaults_.system_prompt);
  if (!f.owns(f.temperature)) f.temperature->setValue(defaults_.sampling.temperature);
  if (!f.owns(f.top_p)) f.top_p->setValue(defaults_.sampling.top_p);
  if (!f.owns(f.min_p)) f.min_p->setValue(defaults_.sampling.min_p);
  if (!f.owns(f.repetition_penalty))
    f.repetition_penalty->setValue(defaults_.sampling.repetition_penalty);
  if (!f.owns(f.max_new_tokens)) f.max_new_tokens->setValue(defaults_.max_new_tokens);
  if (!f.owns(f.prompt_format)) {
    select_data(f.prompt_format, defaults_.prompt_format.isEmpty() ? QStringLiteral("auto")
                                                                   : defaults_.prompt_format);
  }
  if (!f.owns(f.use_tools)) f.use_tools->setChecked(defaults_.use_tools);
  if (!f.owns(f.tuned)) f.tuned->setValue(defaults_.sampling.tuned);
  if (!f.owns(f.context_overflow)) select_data(f.context_overflow, defaults_.context_overflow);
  writing_ = was_writing;
}

void ChatSettingsPanel::setOverrides(const ChatOverrides& overrides) {
  Fields& f = *fields_;
  writing_ = true;
  f.row(f.system_prompt).own->setChecked(overrides.system_prompt.has_value());
  f.row(f.temperature).own->setChecked(overrides.temperature.has_value());
  f.row(f.top_p).own->setChecked(overrides.top_p.has_value());
  f.row(f.min_p).own->setChecked(overrides.min_p.has_value());
  f.row(f.repetition_penalty).own->setChecked(overrides.repetition_penalty.has_value());
  f.row(f.max_new_tokens).own->setChecked(overrides.max_new_tokens.has_value());
  f.row(f.prompt_format).own->setChecked(overrides.prompt_format.has_value());
  f.row(f.use_tools).own->setChecked(overrides.use_tools.has_value());
  f.row(f.tuned).own->setChecked(overrides.tuned_sampling.has_value());
  f.row(f.context_overflow).own->setChecked(overrides.context_overflow.has_value());
  if (overrides.system_prompt) f.system_prompt->setPlainText(*overrides.system_prompt);
  if (overrides.temperature) f.temperature->setValue(*overrides.temperature);
  if (overrides.top_p) f.top_p->setValue(*overrides.top_p);
  if (overrides.min_p) f.min_p->setValue(*overrides.min_p);
  if (overrides.repetition_penalty) f.repetition_penalty->setValue(*overrides.repetition_penalty);
  if (overrides.max_new_tokens) f.max_new_tokens->setValue(*overrides.max_new_tokens);
  if (overrides.prompt_format) select_data(f.prompt_format, *overrides.prompt_format);
  if (overrides.use_tools) f.use_tools->setChecked(*overrides.use_tools);
  if (overrides.tuned_sampling) f.tuned->setValue(*overrides.tuned_sampling);
  if (overrides.context_overflow) select_data(f.context_overflow, *overrides.context_overflow);
  f.text_rules->setValue(overrides.banned_strings, overrides.logit_bias_text);
  showDefaults();
  writing_ = false;
  refreshStates();
}

ChatOverrides ChatSettingsPanel::overrides() const {
  const Fields& f = *fields_;
  ChatOverrides o;
  if (f.owns(f.system_prompt)) o.system_prompt = f.system_prompt->toPlainText();
  if (f.owns(f.temperature)) o.temperature = f.temperature->value();
  if (f.owns(f.top_p)) o.top_p = f.top_p->value();
  if (f.owns(f.min_p)) o.min_p = f.min_p->value();
  if (f.owns(f.repetition_penalty)) o.repetition_penalty = f.repetition_penalty->value();
  if (f.owns(f.max_new_tokens)) o.max_new_tokens = f.max_new_tokens->value();
  if (f.owns(f.prompt_format)) o.prompt_format = f.prompt_format->currentData().toString();
  if (f.owns(f.use_tools)) o.use_tools = f.use_tools->isChecked();
  if (f.owns(f.tuned)) o.tuned_sampling = f.tuned->value();
  if (f.owns(f.context_overflow)) o.context_overflow = f.context_overflow->currentData().toString();
  o.banned_strings = f.text_rules->bannedStrings();
  o.logit_bias_text = f.text_rules->textBiases();
  return o;
}

void ChatSettingsPanel::resetToDefaults() {
  setOverrides(ChatOverrides{});
  emit edited();
}

void ChatSettingsPanel::refreshStates() {
  Fields& f = *fields_;
  const QString format =
      defaults_.prompt_format.isEmpty() ? QStringLiteral("auto") : defaults_.prompt_format;
  const int format_index = f.prompt_format->findData(format);
  const QString format_text =
      format_index >= 0 ? f.prompt_format->itemText(format_index) : defaults_.prompt_format;
  const QString global[] = {
      prompt_preview(defaults_.system_prompt),
      real_text(defaults_.sampling.temperature, limits::kTemperature),
      real_text(defaults_.sampling.top_p, limits::kTopP),
      real_text(defaults_.sampling.min_p, limits::kMinP),
      real_text(defaults_.sampling.repetition_penalty, limits::kRepetitionPenalty),
      tr("%L1 tokens").arg(defaults_.max_new_tokens),
      format_text,
      defaults_.use_tools ? tr("on") : tr("off"),
      tuned_sampling_summary(defaults_.sampling.tuned),
      context_overflow_label(defaults_.context_overflow).toLower(),
  };
  bool any_own = false;
  for (qsizetype i = 0; i < f.rows.size(); ++i) {
    const Fields::Row& row = f.rows.at(i);
    const bool own = row.own->isChecked();
    any_own = any_own || own;
    row.editor->setEnabled(own);
    row.state->setText(own ? tr("This chat's own value; the default is %1").arg(global[i])
                           : tr("Default: %1").arg(global[i]));
  }
  f.reset->setEnabled(any_own || !f.text_rules->bannedStrings().isEmpty() ||
                      !f.text_rules->textBiases().isEmpty());
}

}  // namespace quire::ui
