// The settings panel's fields: how they are built, grouped and filled from a
// set of settings. Behaviour (edits, plan, apply) is in settings_panel.cpp.

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>

#include "device_selector.h"
#include "quire/ui/context_overflow_choices.h"
#include "quire/ui/plan_widget.h"
#include "quire/ui/remote_endpoint_fields.h"
#include "quire/ui/settings_limits.h"
#include "quire/ui/settings_panel.h"
#include "settings_panel_fields.h"
#include "tuned_sampling_editor.h"

namespace quire::ui {
namespace {

QSpinBox* int_field(const QString& name, IntRange range, int step, const QString& suffix,
                    QWidget* parent) {
  auto* box = new QSpinBox(parent);
  box->setObjectName(name);
  box->setRange(range.min, range.max);
  box->setSingleStep(step);
  box->setSuffix(suffix);
  box->setGroupSeparatorShown(true);
  return box;
}

QDoubleSpinBox* real_field(const QString& name, RealRange range, double step, const QString& suffix,
                           QWidget* parent) {
  auto* box = new QDoubleSpinBox(parent);
  box->setObjectName(name);
  box->setDecimals(range.decimals);
  box->setRange(range.min, range.max);
  box->setSingleStep(step);
  box->setSuffix(suffix);
  return box;
}

// Marks the items select_by_data adds for values the combo does not offer.
constexpr int kExtraItemRole = Qt::UserRole + 1;

QLabel* issue_label(const QString& name, QWidget* parent) {
  auto* label = new QLabel(parent);
  label->setObjectName(name);
  label->setStyleSheet(QStringLiteral("color: #c62828;"));
  label->setWordWrap(true);
  label->setVisible(false);
  return label;
}

QLabel* hint(const QString& text, QWidget* parent) {
  auto* label = new QLabel(text, parent);
  label->setWordWrap(true);
  label->setForegroundRole(QPalette::PlaceholderText);
  return label;
}

}  // namespace

void select_by_data(QComboBox* box, const QString& value) {
  for (int i = box->count() - 1; i >= 0; --i) {
    if (box->itemData(i, kExtraItemRole).toBool()) box->removeItem(i);
  }
  int index = value.isEmpty() ? -1 : box->findData(value);
  if (index < 0 && !value.isEmpty()) {
    box->addItem(value, value);
    index = box->count() - 1;
    box->setItemData(index, true, kExtraItemRole);
  }
  box->setCurrentIndex(index);
}

QGroupBox* SettingsPanel::buildModelGroup() {
  auto* group = new QGroupBox(tr("Model"), this);
  auto* form = new QFormLayout(group);

  model_directory_ = new QLineEdit(group);
  model_directory_->setObjectName(QStringLiteral("modelDirectory"));
  model_directory_->setPlaceholderText(
      tr("A model folder: EXL3, EXL2, GPTQ, AWQ, W4A16, FP8 or FP16 safetensors"));
  browse_ = new QPushButton(tr("Browse…"), group);
  browse_->setObjectName(QStringLiteral("browseModel"));
  connect(browse_, &QPushButton::clicked, this, &SettingsPanel::browseForModel);
  auto* row = new QHBoxLayout;
  row->addWidget(model_directory_, 1);
  row->addWidget(browse_);
  form->addRow(tr("Folder"), row);
  model_issue_ = issue_label(QStringLiteral("modelDirectoryIssue"), group);
  form->addRow(QString(), model_issue_);

  recent_ = new QComboBox(group);
  recent_->setObjectName(QStringLiteral("recentModels"));
  recent_->setPlaceholderText(tr("Recently used models"));
  // Picking a recent model fills the folder; the list itself stays as it was.
  connect(recent_, &QComboBox::activated, this, [this](int index) {
    model_directory_->setText(recent_->itemData(index).toString());
    recent_->setCurrentIndex(-1);
  });
  form->addRow(tr("Recent"), recent_);

  backend_ = new QComboBox(group);
  backend_->setObjectName(QStringLiteral("backend"));
  backend_->addItem(tr("Automatic (CUDA when a GPU is found)"), QStringLiteral("auto"));
  backend_->addItem(tr("CPU"), QStringLiteral("cpu"));
  backend_->addItem(tr("CUDA"), QStringLiteral("cuda"));
  form->addRow(tr("Backend"), backend_);
  return group;
}

QGroupBox* SettingsPanel::buildPlacementGroup() {
  auto* group = new QGroupBox(tr("Devices and placement"), this);
  auto* form = new QFormLayout(group);

  devices_ = new DeviceSelector(group);
  devices_->setObjectName(QStringLiteral("devices"));
  form->addRow(tr("Devices"), devices_);

  split_ = new QComboBox(group);
  split_->setObjectName(QStringLiteral("split"));
  split_->addItem(tr("Fill devices in order"), QStringLiteral("fill"));
  split_->setItemData(0, tr("Device 0 takes layers until it is full, then the next one."),
                      Qt::ToolTipRole);
  split_->addItem(tr("Balanced"), QStringLiteral("balanced"));
  split_->setItemData(1, tr("Layers spread so that every device is filled to the same share."),
                      Qt::ToolTipRole);
  split_->addItem(tr("Manual (GB per device)"), QStringLiteral("manual"));
  split_->setItemData(2, tr("Each device up to the GB you give it."), Qt::ToolTipRole);
  form->addRow(tr("Split"), split_);

  reserve_ = real_field(QStringLiteral("reserveMib"), limits::kReserveMib, 64, tr(" MiB"), group);
  reserve_->setToolTip(
      tr("Kept free on every device for the driver, libraries and desktop; a device with "
         "its own figure above keeps that instead."));
  form->addRow(tr("Reserve per device"), reserve_);
  return group;
}

QGroupBox* SettingsPanel::buildCacheGroup() {
  auto* group = new QGroupBox(tr("Context and KV cache"), this);
  auto* form = new QFormLayout(group);

  max_context_ =
      int_field(QStringLiteral("maxContext"), limits::kMaxContext, 1024, tr(" tokens"), group);
  max_context_->setToolTip(tr("The most tokens one conversation keeps."));
  form->addRow(tr("Max context"), max_context_);
  max_context_cap_ = hint(QString(), group);
  max_context_cap_->setObjectName(QStringLiteral("maxContextCap"));
  max_context_cap_->hide();
  form->addRow(QString(), max_context_cap_);

  // Keys and values are coded apart: keys are the more sensitive half, so
  // Q8 keys with Q4 values (Q6) keep most of Q8's accuracy at 6.5 bits.
  cache_keys_ = new QComboBox(group);
  cache_keys_->setObjectName(QStringLiteral("cacheKeys"));
  cache_values_ = new QComboBox(group);
  cache_values_->setObjectName(QStringLiteral("cacheValues"));
  for (const CacheCodingChoice& coding : cache_formats_.codings) {
    cache_keys_->addItem(coding.label(), coding.id);
    cache_values_->addItem(coding.label(), coding.id);
  }
  form->addRow(tr("Cache keys"), cache_keys_);
  form->addRow(tr("Cache values"), cache_values_);
  cache_summary_ = hint(QString(), group);
  cache_summary_->setObjectName(QStringLiteral("cacheFormatSummary"));
  form->addRow(QString(), cache_summary_);
  form->addRow(QString(), hint(tr("Fewer bits hold more tokens in the same memory and read "
                                  "faster at long context, at a small cost in accuracy; keys "
                                  "lose more than values."),
                               group));

  residual_window_ =
      int_field(QStringLiteral("residualWindow"), limits::kResidualWindow, 1, tr(" chats"), group);
  residual_window_->setSpecialValueText(tr("Off"));
  residual_window_->setToolTip(
      tr("Each of this many running chats also keeps its newest tokens (the page being written) "
         "in FP16 beside a coded cache, so attention reads them exactly; each costs one FP16 "
         "page per layer. Nothing changes with an FP16 cache."));
  form->addRow(tr("Residual window"), residual_window_);

  cache_tokens_ =
      int_field(QStringLiteral("cacheTokens"), limits::kCacheTokens, 4096, tr(" tokens"), group);
  cache_tokens_->setToolTip(
      tr("Shared by every conversation; pages of earlier turns stay "
         "cached for reuse until the space is needed."));
  form->addRow(tr("Cache size"), cache_tokens_);
  cache_issue_ = issue_label(QStringLiteral("cacheTokensIssue"), group);
  form->addRow(QString(), cache_issue_);

  host_cache_ =
      int_field(QStringLiteral("hostCacheMib"), limits::kHostCacheMib, 512, tr(" MiB"), group);
  host_cache_->setSpecialValueText(tr("Off"));
  host_cache_->setToolTip(
      tr("Pages evicted from the GPU are kept in host memory by their "
         "hash and copied back instead of recomputed."));
  form->addRow(tr("Host-memory tier"), host_cache_);
  form->addRow(QString(), hint(tr("Evicted chats wait here instead of being recomputed"), group));

  reserve_pages_ = new QComboBox(group);
  reserve_pages_->setObjectName(QStringLiteral("reservePages"));
  reserve_pages_->addItem(tr("Every page when a reply starts"), QStringLiteral("all"));
  reserve_pages_->addItem(tr("Pages as replies grow"), QStringLiteral("on-demand"));
  form->addRow(tr("Page reservation"), reserve_pages_);
  reserve_pages_hint_ = hint(QString(), group);
  reserve_pages_hint_->setObjectName(QStringLiteral("reservePagesHint"));
  form->addRow(QString(), reserve_pages_hint_);

  cache_residence_ = new QComboBox(group);
  cache_residence_->setObjectName(QStringLiteral("cacheResidence"));
  cache_residence_->addItem(tr("On the devices"), QStringLiteral("device"));
  cache_residence_->addItem(tr("In host memory, streamed to the devices"),
                            QStringLiteral("offloaded"));
  cache_residence_->addItem(tr("Global-attention layers in host memory"),
                            QStringLiteral("offload-global"));
  form->addRow(tr("Cache lives"), cache_residence_);
  cache_residence_hint_ = hint(QString(), group);
  cache_residence_hint_->setObjectName(QStringLiteral("cacheResidenceHint"));
  form->addRow(QString(), cache_residence_hint_);

  cache_device_ = new QComboBox(group);
  cache_device_->setObjectName(QStringLiteral("cacheDevice"));
  cache_device_->setToolTip(
      tr("Keep every layer's pages on one device while the layers spread over all of them; "
         "layers elsewhere send their attention there."));
  form->addRow(tr("Cache device"), cache_device_);
  cache_device_issue_ = issue_label(QStringLiteral("cacheDeviceIssue"), group);
  form->addRow(QString(), cache_device_issue_);
  return group;
}

void SettingsPanel::fillCacheDevices(int device) {
  const QStringList names = devices_->deviceNames();
  cache_device_->clear();
  cache_device_->addItem(tr("With its layers"), -1);
  for (int index = 0; index < names.size(); ++index)
    cache_device_->addItem(names.at(index), index);
  if (device >= names.size()) cache_device_->addItem(tr("device %1").arg(device), device);
  cache_device_->setCurrentIndex(std::max(0, cache_device_->findData(device)));
}

QGroupBox* SettingsPanel::buildGenerationGroup() {
  auto* group = new QGroupBox(tr("Generation"), this);
  auto* form = new QFormLayout(group);
  max_batch_ = int_field(QStringLiteral("maxBatch"), limits::kMaxBatch, 1, QString(), group);
  max_batch_->setToolTip(tr("Conversations decoded together in one step."));
  form->addRow(tr("Max batch"), max_batch_);
  chunk_size_ =
      int_field(QStringLiteral("chunkSize"), limits::kChunkSize, 256, tr(" tokens"), group);
  chunk_size_->setToolTip(
      tr("Prompt tokens computed per step; larger chunks need more "
         "scratch memory on every device."));
  form->addRow(tr("Prefill chunk"), chunk_size_);

  temperature_ =
      real_field(QStringLiteral("temperature"), limits::kTemperature, 0.05, QString(), group);
  form->addRow(tr("Temperature"), temperature_);
  top_k_ = int_field(QStringLiteral("topK"), limits::kTopK, 1, QString(), group);
  top_k_->setSpecialValueText(tr("Off"));
  form->addRow(tr("Top-k"), top_k_);
  top_p_ = real_field(QStringLiteral("topP"), limits::kTopP, 0.05, QString(), group);
  form->addRow(tr("Top-p"), top_p_);
  min_p_ = real_field(QStringLiteral("minP"), limits::kMinP, 0.01, QString(), group);
  form->addRow(tr("Min-p"), min_p_);
  repetition_penalty_ = real_field(QStringLiteral("repetitionPenalty"), limits::kRepetitionPenalty,
                                   0.01, QString(), group);
  form->addRow(tr("Repetition penalty"), repetition_penalty_);
  tuned_sampling_ = new TunedSamplingEditor(group, QStringLiteral("default"));
  tuned_sampling_->setObjectName(QStringLiteral("defaultTunedSampling"));
  form->addRow(QString(), hint(tr("Advanced sampling: DRY, XTC, top-nσ and mirostat v2, for "
                                  "every chat that does not set its own."),
                               group));
  form->addRow(tuned_sampling_);
  return group;
}

QGroupBox* SettingsPanel::buildDraftGroup() {
  auto* group = new QGroupBox(tr("Speculative decoding"), this);
  group->setObjectName(QStringLiteral("draftGroup"));
  auto* form = new QFormLayout(group);
  draft_method_ = new QComboBox(group);
  draft_method_->setObjectName(QStringLiteral("draftMethod"));
  draft_method_->addItem(tr("Off"), QStringLiteral("off"));
  draft_method_->addItem(tr("From the text so far (n-grams)"), QStringLiteral("ngram"));
  draft_method_->addItem(tr("With a draft model"), QStringLiteral("model"));
  draft_method_->setToolTip(
      tr("N-grams propose the tokens that followed the same words earlier in the chat; a "
         "draft model, a smaller model of the same family, proposes what it would say. The "
         "model checks them all in one step."));
  form->addRow(tr("Drafts"), draft_method_);
  draft_model_ = new QLineEdit(group);
  draft_model_->setObjectName(QStringLiteral("draftModel"));
  draft_model_->setPlaceholderText(
      tr("A smaller model of the same family, with the same tokenizer"));
  browse_draft_model_ = new QPushButton(tr("Browse…"), group);
  browse_draft_model_->setObjectName(QStringLiteral("browseDraftModel"));
  connect(browse_draft_model_, &QPushButton::clicked, this, &SettingsPanel::browseForDraftModel);
  auto* row = new QHBoxLayout;
  row->addWidget(draft_model_, 1);
  row->addWidget(browse_draft_model_);
  form->addRow(tr("Draft model"), row);
  draft_tokens_ =
      int_field(QStringLiteral("draftTokens"), limits::kDraftTokens, 1, tr(" tokens"), group);
  draft_tokens_->setToolTip(tr("The most tokens drafted and checked in one step."));
  form->addRow(tr("Longest draft"), draft_tokens_);
  form->addRow(QString(),
               hint(tr("Replies come several tokens a step where the drafts are right: "
                       "n-grams where a reply repeats what came before, such as edits of "
                       "code; a draft model wherever it agrees with the model. Greedy "
                       "replies keep their text, sampled ones their distribution. A draft "
                       "model loads with the model."),
                    group));
  return group;
}

QGroupBox* SettingsPanel::buildChatGroup() {
  auto* group = new QGroupBox(tr("Chat"), this);
  auto* form = new QFormLayout(group);
  prompt_format_ = new QComboBox(group);
  prompt_format_->setObjectName(QStringLiteral("promptFormat"));
  prompt_format_->addItem(tr("Automatic (from the model)"), QStringLiteral("auto"));
  form->addRow(tr("Prompt format"), prompt_format_);
  system_prompt_ = new QPlainTextEdit(group);
  system_prompt_->setObjectName(QStringLiteral("systemPrompt"));
  system_prompt_->setPlaceholderText(tr("Instructions the model sees before every chat"));
  system_prompt_->setTabChangesFocus(true);
  system_prompt_->setMinimumHeight(72);
  form->addRow(tr("System prompt"), system_prompt_);
  context_overflow_ = new QComboBox(group);
  context_overflow_->setObjectName(QStringLiteral("contextOverflow"));
  for (const QString& id : context_overflow_ids())
    context_overflow_->addItem(context_overflow_label(id), id);
  context_overflow_->setToolTip(context_overflow_explanation() + u' ' +
                                tr("A chat may choose otherwise in its Chat settings."));
  form->addRow(tr("When the context fills"), context_overflow_);
  default_preset_ = new QComboBox(group);
  default_preset_->setObjectName(QStringLiteral("defaultPreset"));
  default_preset_->addItem(tr("None"), QString());
  default_preset_->setToolTip(
      tr("A new chat starts with this preset's values and remembers it, as if chosen in its "
         "Chat settings."));
  form->addRow(tr("Default preset for new chats"), default_preset_);
  return group;
}

QWidget* SettingsPanel::buildPlanSide() {
  auto* side = new QWidget(this);
  auto* layout = new QVBoxLayout(side);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* group = new QGroupBox(tr("Memory plan"), side);
  auto* group_layout = new QVBoxLayout(group);
  plan_ = new PlanWidget(group);
  plan_->setObjectName(QStringLiteral("plan"));
  group_layout->addWidget(plan_);
  layout->addWidget(group, 1);

  // Offered when the plan turns red and something near it fits.
  fit_button_ = new QPushButton(side);
  fit_button_->setObjectName(QStringLiteral("fitButton"));
  fit_button_->setVisible(false);
  connect(fit_button_, &QPushButton::clicked, this, &SettingsPanel::useFitSuggestion);
  layout->addWidget(fit_button_, 0, Qt::AlignLeft);

  reload_note_ = new QLabel(side);
  reload_note_->setObjectName(QStringLiteral("reloadNote"));
  reload_note_->setWordWrap(true);
  reload_note_->setVisible(false);
  layout->addWidget(reload_note_);

  // Why Apply is off, beside it: the field that says so may be scrolled away.
  apply_blocked_ = new QLabel(side);
  apply_blocked_->setObjectName(QStringLiteral("applyBlockedReason"));
  apply_blocked_->setWordWrap(true);
  apply_blocked_->setStyleSheet(QStringLiteral("color: #b3261e;"));
  apply_blocked_->setVisible(false);
  layout->addWidget(apply_blocked_);

  auto* buttons = new QHBoxLayout;
  buttons->addStretch(1);
  revert_button_ = new QPushButton(tr("Revert"), side);
  revert_button_->setObjectName(QStringLiteral("revertButton"));
  connect(revert_button_, &QPushButton::clicked, this, &SettingsPanel::revert);
  apply_button_ = new QPushButton(tr("Apply"), side);
  apply_button_->setObjectName(QStringLiteral("applyButton"));
  apply_button_->setDefault(true);
  connect(apply_button_, &QPushButton::clicked, this, &SettingsPanel::apply);
  buttons->addWidget(revert_button_);
  buttons->addWidget(apply_button_);
  layout->addLayout(buttons);
  return side;
}

void SettingsPanel::connectEdits() {
  auto edited = [this] { onFieldEdited(); };
  connect(model_directory_, &QLineEdit::textChanged, this, edited);
  connect(remote_, &RemoteEndpointFields::edited, this, edited);
  connect(remote_, &RemoteEndpointFields::listModelsRequested, this, [this] { askRemote(false); });
  connect(backend_, &QComboBox::currentIndexChanged, this, edited);
  connect(devices_, &DeviceSelector::edited, this, edited);
  connect(split_, &QComboBox::currentIndexChanged, this, [this] {
    devices_->setManualVisible(split_->currentData().toString() == QLatin1String("manual"));
    onFieldEdited();
  });
  connect(reserve_pages_, &QComboBox::currentIndexChanged, this, [this] {
    reserve_pages_hint_->setText(reservation_explanation(reserve_pages_->currentData().toString()));
  });
  for (QComboBox* box : {cache_keys_, cache_values_}) {
    connect(box, &QComboBox::currentIndexChanged, this,
            [this] { cache_summary_->setText(cache_formats_.summary(cacheFormat())); });
  }
  connect(cache_residence_, &QComboBox::currentIndexChanged, this, [this] {
    cache_residence_hint_->setText(
        cache_residence_explanation(cache_residence_->currentData().toString()));
  });
  for (QComboBox* box : {cache_keys_, cache_values_, prompt_format_, reserve_pages_,
                         cache_residence_, cache_device_, context_overflow_}) {
    connect(box, &QComboBox::currentIndexChanged, this, edited);
  }
  for (QSpinBox* box : {max_context_, cache_tokens_, host_cache_, residual_window_, max_batch_,
                        chunk_size_, top_k_}) {
    connect(box, &QSpinBox::valueChanged, this, edited);
  }
  connect(reserve_, &QDoubleSpinBox::valueChanged, devices_, &DeviceSelector::setCommonReserve);
  for (QDoubleSpinBox* box : {reserve_, temperature_, top_p_, min_p_, repetition_penalty_}) {
    connect(box, &QDoubleSpinBox::valueChanged, this, edited);
  }
  connect(system_prompt_, &QPlainTextEdit::textChanged, this, edited);
  connect(draft_method_, &QComboBox::currentIndexChanged, this, [this] {
    enableDraftFields();
    onFieldEdited();
  });
  connect(draft_model_, &QLineEdit::textChanged, this, edited);
  connect(draft_tokens_, &QSpinBox::valueChanged, this, edited);
  connect(tuned_sampling_, &TunedSamplingEditor::changed, this, edited);
  connect(default_preset_, &QComboBox::currentIndexChanged, this, edited);
  connect(disk_cache_, &DiskCacheGroup::edited, this, edited);
}

void SettingsPanel::writeFields(const EngineSettings& s) {
  writing_ = true;
  model_directory_->setText(s.model_directory);
  remote_->setValues(s.remote_url, s.remote_model);
  recent_models_ = s.recent_models;
  tuned_sampling_->setValue(s.sampling.tuned);
  recent_->clear();
  for (const QString& path : s.recent_models)
    recent_->addItem(path, path);
  recent_->setCurrentIndex(-1);
  select_by_data(backend_, s.backend);
  devices_->setCommonReserve(s.reserve_mib);
  devices_->setSelection(s.devices, s.manual_gb, s.device_reserve_mib);
  select_by_data(split_, split_id(s.split));
  devices_->setManualVisible(s.split == EngineSettings::Split::Manual);
  reserve_->setValue(s.reserve_mib);
  max_context_->setValue(s.max_context);
  selectCacheFormat(s.cache_format);
  cache_tokens_->setValue(s.cache_tokens);
  host_cache_->setValue(s.host_cache_mib);
  disk_cache_->setValues(s.disk_cache, s.disk_cache_mib);
  residual_window_->setValue(s.residual_window);
  select_by_data(reserve_pages_, s.reserve_pages);
  reserve_pages_hint_->setText(reservation_explanation(s.reserve_pages));
  select_by_data(cache_residence_, s.cache_residence);
  cache_residence_hint_->setText(cache_residence_explanation(s.cache_residence));
  fillCacheDevices(s.cache_device);
  max_batch_->setValue(s.max_batch);
  chunk_size_->setValue(s.chunk_size);
  temperature_->setValue(s.sampling.temperature);
  top_k_->setValue(s.sampling.top_k);
  top_p_->setValue(s.sampling.top_p);
  min_p_->setValue(s.sampling.min_p);
  repetition_penalty_->setValue(s.sampling.repetition_penalty);
  select_by_data(draft_method_, s.drafts.method);
  draft_tokens_->setValue(s.drafts.max_tokens);
  draft_model_->setText(s.drafts.model_directory);
  enableDraftFields();
  system_prompt_->setPlainText(s.system_prompt);
  select_by_data(prompt_format_, s.prompt_format);
  select_by_data(context_overflow_, s.context_overflow);
  if (s.default_preset.isEmpty())
    default_preset_->setCurrentIndex(0);
  else
    select_by_data(default_preset_, s.default_preset);
  writing_ = false;
}

}  // namespace quire::ui
