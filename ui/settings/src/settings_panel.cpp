#include "quire/ui/settings_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>
#include <utility>

#include "device_selector.h"
#include "quire/ui/plan_widget.h"
#include "quire/ui/remote_endpoint_fields.h"
#include "quire/ui/settings_limits.h"
#include "settings_panel_fields.h"
#include "tuned_sampling_editor.h"
#include "wheel_guard.h"

namespace quire::ui {
namespace {

void show_issues(QLabel* label, const QList<SettingsIssue>& issues, SettingsIssue::Field field) {
  QStringList lines;
  for (const SettingsIssue& issue : issues) {
    if (issue.field == field) lines.append(issue.message);
  }
  label->setText(lines.join(QLatin1Char('\n')));
  label->setVisible(!lines.isEmpty());
}

}  // namespace

SettingsPanel::SettingsPanel(CacheFormatChoices cache_formats, QWidget* parent)
    : QWidget(parent), cache_formats_(std::move(cache_formats)) {
  auto* fields = new QWidget(this);
  auto* column = new QVBoxLayout(fields);
  QGroupBox* model_group = buildModelGroup();
  column->addWidget(model_group);
  remote_ = new RemoteEndpointFields(fields);
  remote_->setObjectName(QStringLiteral("remoteEngine"));
  column->addWidget(remote_);
  QGroupBox* placement_group = buildPlacementGroup();
  column->addWidget(placement_group);
  QGroupBox* cache_group = buildCacheGroup();
  column->addWidget(cache_group);
  disk_cache_ = new DiskCacheGroup(fields);
  column->addWidget(disk_cache_);
  connect(disk_cache_, &DiskCacheGroup::clearRequested, this,
          &SettingsPanel::clearDiskCacheRequested);
  local_only_ = {model_group, placement_group, cache_group, disk_cache_};
  column->addWidget(buildGenerationGroup());
  // Drafting runs in the engine here; a remote engine decodes its own way.
  QGroupBox* draft_group = buildDraftGroup();
  column->addWidget(draft_group);
  local_only_.append(draft_group);
  column->addWidget(buildChatGroup());
  column->addStretch(1);

  auto* scroll = new QScrollArea(this);
  scroll->setObjectName(QStringLiteral("settingsFields"));
  scroll->setWidget(fields);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);

  auto* layout = new QHBoxLayout(this);
  layout->addWidget(scroll, 3);
  layout->addWidget(buildPlanSide(), 2);

  // Typing a number fires a change per key; the planner should price the
  // number, not every prefix of it.
  debounce_ = new QTimer(this);
  debounce_->setSingleShot(true);
  debounce_->setInterval(kEditDebounceMs);
  connect(debounce_, &QTimer::timeout, this, &SettingsPanel::announceEdit);

  choose_directory_ = [](QWidget* owner, const QString& start) {
    return QFileDialog::getExistingDirectory(owner, tr("Choose a model folder"), start,
                                             QFileDialog::ShowDirsOnly);
  };
  connectEdits();
  guard_wheel_in(fields);
  setSettings(EngineSettings{});
}

SettingsPanel::~SettingsPanel() = default;

void SettingsPanel::setAvailableDevices(const QStringList& names) {
  const int cache_device = settings().cache_device;
  devices_->setDeviceNames(names);
  writing_ = true;
  fillCacheDevices(cache_device);
  writing_ = false;
  refreshState();
}

void SettingsPanel::setPromptFormats(const QStringList& names) {
  const QString current = prompt_format_->currentData().toString();
  writing_ = true;
  prompt_format_->clear();
  prompt_format_->addItem(tr("Automatic (from the model)"), QStringLiteral("auto"));
  for (const QString& name : names) {
    if (name != QLatin1String("auto")) prompt_format_->addItem(name, name);
  }
  select_by_data(prompt_format_, current);
  writing_ = false;
  refreshState();
}

void SettingsPanel::setPresetNames(const QStringList& names) {
  const QString current = default_preset_->currentData().toString();
  writing_ = true;
  default_preset_->clear();
  default_preset_->addItem(tr("None"), QString());
  for (const QString& name : names)
    default_preset_->addItem(name, name);
  if (current.isEmpty())
    default_preset_->setCurrentIndex(0);
  else
    select_by_data(default_preset_, current);
  writing_ = false;
  refreshState();
}

void SettingsPanel::setDirectoryChooser(DirectoryChooser chooser) {
  choose_directory_ = std::move(chooser);
}

void SettingsPanel::setSettings(const EngineSettings& settings) {
  debounce_->stop();
  writeFields(settings);
  // Read back rather than copied: what Revert restores and what the reload
  // check compares against must be what the fields can hold.
  applied_ = this->settings();
  // The application loads what it sets and reports a failure itself; the
  // address it set needs no check before it is applied again.
  answered_url_ = applied_.remote_url;
  answered_key_.clear();
  refreshState();
}

EngineSettings SettingsPanel::settings() const {
  EngineSettings s;
  s.model_directory = model_directory_->text();
  s.remote_url = remote_->url();
  s.remote_model = remote_->model();
  s.recent_models = recent_models_;
  s.backend = backend_->currentData().toString();
  s.devices = devices_->devices();
  s.split = parse_split(split_->currentData().toString());
  s.manual_gb = devices_->manualGb();
  s.reserve_mib = reserve_->value();
  s.device_reserve_mib = devices_->reserveMib();
  s.max_context = max_context_->value();
  s.cache_format = cacheFormat();
  s.cache_tokens = cache_tokens_->value();
  s.host_cache_mib = host_cache_->value();
  s.disk_cache = disk_cache_->isOn();
  s.disk_cache_mib = disk_cache_->limitMib();
  s.residual_window = residual_window_->value();
  s.reserve_pages = reserve_pages_->currentData().toString();
  s.cache_residence = cache_residence_->currentData().toString();
  s.cache_device = cache_device_->currentIndex() < 0 ? -1 : cache_device_->currentData().toInt();
  s.max_batch = max_batch_->value();
  s.chunk_size = chunk_size_->value();
  s.sampling.temperature = temperature_->value();
  s.sampling.top_k = top_k_->value();
  s.sampling.top_p = top_p_->value();
  s.sampling.min_p = min_p_->value();
  s.sampling.repetition_penalty = repetition_penalty_->value();
  s.sampling.tuned = tuned_sampling_->value();
  s.drafts.method = draft_method_->currentData().toString();
  s.drafts.max_tokens = draft_tokens_->value();
  s.drafts.model_directory = draft_model_->text().trimmed();
  s.system_prompt = system_prompt_->toPlainText();
  s.prompt_format = prompt_format_->currentData().toString();
  s.context_overflow = context_overflow_->currentData().toString();
  s.default_preset = default_preset_->currentData().toString();
  return s;
}

void SettingsPanel::setDiskCacheUsage(const DiskCacheUsageView& usage) {
  disk_cache_->setUsage(usage);
}

bool SettingsPanel::hasUnappliedChanges() const {
  return settings() != applied_ || remote_->keyEdited();
}

void SettingsPanel::setApiKey(const QString& key) {
  remote_->setKey(key);
  refreshState();
}

bool SettingsPanel::apiKeyEdited() const {
  return remote_->keyEdited();
}

void SettingsPanel::setRemoteModels(const QStringList& models, const QString& problem) {
  // The answer is for the address and key asked; an edit since then is not checked by it.
  const bool current = asked_url_ == remote_->url() && asked_key_ == remote_->key();
  const bool apply_now = apply_after_check_ && current && problem.isEmpty();
  apply_after_check_ = false;
  if (current && problem.isEmpty()) {
    answered_url_ = asked_url_;
    answered_key_ = asked_key_;
  }
  remote_->setModels(models, problem);
  showPlan();
  if (apply_now) apply();
}

bool SettingsPanel::remoteChecked() const {
  // A key typed since is checked with the address; the stored one came with it.
  return !answered_url_.isEmpty() && answered_url_ == remote_->url() &&
         (!remote_->keyEdited() || answered_key_ == remote_->key());
}

void SettingsPanel::askRemote(bool then_apply) {
  asked_url_ = remote_->url();
  asked_key_ = remote_->key();
  apply_after_check_ = then_apply;
  remote_->showAsking(asked_url_);
  emit remoteModelsRequested(asked_url_, asked_key_);
}

void SettingsPanel::showPlan() {
  PlanView shown = priced_;
  // The planner prices memory only: settings that cannot be applied as they
  // stand do not "fit", whatever their memory says.
  if (shown.valid && shown.fits && !shown.remote) {
    const QList<SettingsIssue> found = issues();
    if (!found.isEmpty()) {
      shown.fits = false;
      shown.verdict = tr("cannot be applied as set: %1").arg(found.first().message);
    }
  }
  if (shown.valid && shown.remote && !remoteChecked()) {
    shown.unchecked = true;
    shown.verdict = tr("will run on the remote engine at %1 once it answers: Apply checks the "
                       "address first")
                        .arg(remote_->url());
  }
  // Shown again after a check, a plan waiting for its pricing stays marked so.
  const bool stale = plan_->isStale();
  plan_->setPlan(shown);
  if (stale) plan_->setStale(true);
}

QList<SettingsIssue> SettingsPanel::issues() const {
  // The plan of these settings knows the model's limit; one not priced yet
  // may be another folder's, so it is left out until it is.
  const PlanView& plan = plan_->plan();
  const qint64 model_limit = plan.valid && !plan_->isStale() ? plan.model_context_tokens : 0;
  QList<SettingsIssue> found = validate_settings(settings(), devices_->deviceNames(), model_limit);
  const QString selection = devices_->selectionProblem();
  if (!selection.isEmpty()) found.prepend({SettingsIssue::Field::Devices, -1, selection});
  return found;
}

void SettingsPanel::setPlan(const PlanView& plan) {
  priced_ = plan;
  plan_->setStale(false);
  plan_->setPlan(plan);
  refreshContextCap();
  refreshState();
}

QString SettingsPanel::cacheFormat() const {
  return cache_formats_.id_of(cache_keys_->currentData().toString(),
                              cache_values_->currentData().toString());
}

void SettingsPanel::selectCacheFormat(const QString& id) {
  const CacheFormatChoice* format = cache_formats_.format(id);
  select_by_data(cache_keys_, format ? format->key : QString());
  select_by_data(cache_values_, format ? format->value : QString());
  cache_summary_->setText(cache_formats_.summary(cacheFormat()));
}

void SettingsPanel::useFitSuggestion() {
  const PlanView& plan = plan_->plan();
  if (!plan.valid || plan.fits || plan.fit_label.isEmpty()) return;
  if (!plan.fit_cache_format.isEmpty()) {
    selectCacheFormat(plan.fit_cache_format);
  } else if (plan.fit_cache_tokens > 0) {
    const int tokens = static_cast<int>(std::clamp<qint64>(
        plan.fit_cache_tokens, cache_tokens_->minimum(), cache_tokens_->maximum()));
    // A conversation cannot hold more than the whole cache.
    if (max_context_->value() > tokens) max_context_->setValue(tokens);
    cache_tokens_->setValue(tokens);
  }
}

void SettingsPanel::refreshContextCap() {
  // The setting is kept for other models; this one reads no further than its limit.
  const PlanView& plan = plan_->plan();
  const qint64 limit = plan.valid ? plan.model_context_tokens : 0;
  const bool capped = limit > 0 && max_context_->value() > limit;
  max_context_cap_->setText(
      capped ? tr("Capped at %1 tokens: the model's limit").arg(QLocale().toString(limit))
             : QString());
  max_context_cap_->setVisible(capped);
}

bool SettingsPanel::planRejectsEdit() const {
  // A plan still being priced blocks nothing, so a panel nobody prices for
  // still applies. The verdict only speaks for what it prices (the model,
  // its placement and the cache): a live change such as the temperature is
  // applied whatever the plan of the loaded placement says.
  if (plan_->isStale()) return false;
  const PlanView& plan = plan_->plan();
  const bool rejected = plan.valid ? !plan.fits : !plan.error.isEmpty();
  return rejected && needs_reload(applied_, settings());
}

void SettingsPanel::apply() {
  // An edit not announced yet is priced first (the application answers at
  // once), so the verdict below is the edit's own and not the one before it.
  if (debounce_->isActive()) {
    debounce_->stop();
    announceEdit();
  }
  if (!hasUnappliedChanges() || !issues().isEmpty() || planRejectsEdit()) return;
  const EngineSettings edited = settings();
  // A remote address or key that has not answered is checked first: a wrong
  // one is said next to the fields, in this dialog, and nothing is applied.
  if (is_remote(edited) && !remoteChecked()) return askRemote(true);
  // A new key reconnects the remote engine with it.
  const bool key_changed = remote_->keyEdited();
  const bool reload = needs_reload(applied_, edited) || (key_changed && is_remote(edited));
  applied_ = edited;
  if (key_changed) {
    remote_->markKeyApplied();
    emit apiKeyApplied(edited.remote_url, remote_->key());
  }
  refreshState();
  emit applyRequested(edited, reload);
}

void SettingsPanel::revert() {
  if (!hasUnappliedChanges()) return;
  writeFields(applied_);
  refreshState();
  // The plan on screen belongs to the edited settings: price the old ones.
  debounce_->start();
}

void SettingsPanel::browseForModel() {
  const QString current = model_directory_->text();
  const QString start = current.isEmpty() ? QDir::homePath() : current;
  const QString chosen = choose_directory_ ? choose_directory_(this, start) : QString();
  if (!chosen.isEmpty()) model_directory_->setText(chosen);
}

void SettingsPanel::browseForDraftModel() {
  const QString current = draft_model_->text().trimmed();
  QString start = current;
  if (start.isEmpty())
    start = model_directory_->text().isEmpty() ? QDir::homePath() : model_directory_->text();
  const QString chosen = choose_directory_ ? choose_directory_(this, start) : QString();
  if (!chosen.isEmpty()) draft_model_->setText(chosen);
}

void SettingsPanel::enableDraftFields() {
  const QString method = draft_method_->currentData().toString();
  draft_tokens_->setEnabled(method != QLatin1String("off"));
  const bool model = method == QLatin1String("model");
  draft_model_->setEnabled(model);
  browse_draft_model_->setEnabled(model);
}

void SettingsPanel::onFieldEdited() {
  if (writing_) return;
  refreshState();
  debounce_->start();  // restarts: only the last of a burst of edits is announced
}

void SettingsPanel::announceEdit() {
  plan_->setStale(true);
  fit_button_->setVisible(false);  // the suggestion was for the settings before this edit
  emit settingsEdited(settings());
}

void SettingsPanel::refreshState() {
  showPlan();
  const EngineSettings edited = settings();
  const QList<SettingsIssue> found = issues();
  show_issues(model_issue_, found, SettingsIssue::Field::ModelDirectory);
  QStringList remote_issues;
  for (const SettingsIssue& issue : found) {
    if (issue.field == SettingsIssue::Field::RemoteUrl) remote_issues << issue.message;
  }
  remote_->setIssue(remote_issues.join(QLatin1Char('\n')));
  // A remote engine places and caches on its own machine.
  for (QWidget* group : std::as_const(local_only_))
    group->setEnabled(!is_remote(edited));
  show_issues(cache_issue_, found, SettingsIssue::Field::CacheTokens);
  show_issues(cache_device_issue_, found, SettingsIssue::Field::CacheDevice);
  devices_->showIssues(found);
  refreshContextCap();

  const bool dirty = hasUnappliedChanges();
  const QStringList reasons = dirty ? reload_reasons(applied_, edited) : QStringList();
  apply_button_->setText(reasons.isEmpty() ? tr("Apply") : tr("Apply and reload model"));
  apply_button_->setEnabled(dirty && found.isEmpty() && !planRejectsEdit());
  revert_button_->setEnabled(dirty);
  reload_note_->setText(
      reasons.isEmpty()
          ? QString()
          : tr("Applying reloads the model for: %1.").arg(reasons.join(QStringLiteral(", "))));
  reload_note_->setVisible(!reasons.isEmpty());
  QStringList blocked;
  for (const SettingsIssue& issue : found)
    blocked << issue.message;
  apply_blocked_->setText(
      blocked.isEmpty() ? QString() : tr("Apply is off: %1").arg(blocked.join(QLatin1Char(' '))));
  apply_blocked_->setVisible(dirty && !blocked.isEmpty());

  const PlanView& plan = plan_->plan();
  const bool offer = plan.valid && !plan.fits && !plan.fit_label.isEmpty() && !plan_->isStale();
  fit_button_->setText(offer ? tr("Use %1").arg(plan.fit_label) : QString());
  fit_button_->setToolTip(offer ? plan.fit_change : QString());
  fit_button_->setVisible(offer);
}

}  // namespace quire::ui
