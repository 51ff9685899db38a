#pragma once

// The engine settings with their memory plan beside them. Every edit is
// announced (debounced) through settingsEdited so the application can price
// it with the planner and answer with setPlan before anything is loaded.
// Apply hands the settings over and says whether they need a model reload;
// Revert goes back to the settings last set or applied.

#include <QList>
#include <QString>
#include <QStringList>
#include <QWidget>
#include <functional>

#include "quire/ui/cache_format_choices.h"
#include "quire/ui/disk_cache_group.h"
#include "quire/ui/settings_data.h"
#include "quire/ui/settings_validation.h"

class QComboBox;
class QDoubleSpinBox;
class QGroupBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QCheckBox;
class QTimer;

namespace quire::ui {

class DeviceSelector;
class PlanWidget;
class RemoteEndpointFields;
class TunedSamplingEditor;

class SettingsPanel : public QWidget {
  Q_OBJECT

 public:
  // Quiet time after the last edit before settingsEdited fires.
  static constexpr int kEditDebounceMs = 150;

  // Asked for a model folder when Browse… is pressed; returns "" on cancel.
  using DirectoryChooser = std::function<QString(QWidget* parent, const QString& start)>;

  // The cache fields offer `cache_formats`, the engine's own table.
  explicit SettingsPanel(CacheFormatChoices cache_formats, QWidget* parent = nullptr);
  ~SettingsPanel() override;

  // The backend's devices by index ("cuda0: NVIDIA H100 80GB HBM3").
  void setAvailableDevices(const QStringList& names);
  // Prompt formats offered besides "auto" (the model's own).
  void setPromptFormats(const QStringList& names);
  // The presets "Default preset for new chats" offers besides none.
  void setPresetNames(const QStringList& names);
  // Replaces the QFileDialog behind Browse… (tests, or a platform dialog).
  void setDirectoryChooser(DirectoryChooser chooser);

  // Shows `settings` and makes them the applied state Revert returns to.
  // Does not emit settingsEdited: the caller knows what it set.
  void setSettings(const EngineSettings& settings);
  // What the fields hold now.
  EngineSettings settings() const;
  // What was last set or applied, as the fields show it.
  EngineSettings appliedSettings() const { return applied_; }
  bool hasUnappliedChanges() const;
  // Problems that keep Apply disabled; also shown next to their fields. A
  // plan that rejects a change needing a reload keeps it disabled as well.
  QList<SettingsIssue> issues() const;

  // The plan for the settings last announced through settingsEdited.
  void setPlan(const PlanView& plan);
  // The API key stored for the remote engine on show, for its field.
  void setApiKey(const QString& key);
  // The remote engine's answer to remoteModelsRequested. It is also how a
  // remote address is checked: Apply with an address (or key) that has not
  // answered yet asks for the models first and applies only when they come;
  // a problem stays next to the fields and nothing is applied. Until the
  // address answers, the plan does not say that it runs there.
  void setRemoteModels(const QStringList& models, const QString& problem);
  // The key field was typed in and not applied yet.
  bool apiKeyEdited() const;

  // Settings → Disk cache: the folder and what each model's pages take there.
  void setDiskCacheUsage(const DiskCacheUsageView& usage);
  DiskCacheGroup* diskCacheGroup() const { return disk_cache_; }

  // Writes the plan's nearest fitting settings ("Use q8 cache") into the
  // fields, to be priced and applied like any edit. Nothing without one.
  void useFitSuggestion();

 public slots:
  void apply();
  void revert();
  void browseForModel();
  void browseForDraftModel();

 signals:
  void settingsEdited(const quire::ui::EngineSettings& settings);
  void applyRequested(const quire::ui::EngineSettings& settings, bool needs_reload);
  // The remote engine's key was changed and applied: keep it for `url`.
  // Emitted before applyRequested, which reconnects with it.
  void apiKeyApplied(const QString& url, const QString& key);
  void remoteModelsRequested(const QString& url, const QString& key);
  // Disk cache → Clear was pressed.
  void clearDiskCacheRequested();

 private:
  // Building the form (settings_panel_form.cpp).
  QGroupBox* buildModelGroup();
  QGroupBox* buildPlacementGroup();
  QGroupBox* buildCacheGroup();
  QGroupBox* buildGenerationGroup();
  QGroupBox* buildDraftGroup();
  // The draft fields that mean something for the chosen method.
  void enableDraftFields();
  QGroupBox* buildChatGroup();
  QWidget* buildPlanSide();
  void connectEdits();
  void writeFields(const EngineSettings& settings);
  // The format id of the two cache fields, and setting both from one.
  QString cacheFormat() const;
  void selectCacheFormat(const QString& id);
  // Lists "With its layers" and every known device, and selects `device`
  // (a device index, or -1); an index beyond the known devices gets an item
  // of its own, so showing settings and reading them back keeps it.
  void fillCacheDevices(int device);

  void onFieldEdited();
  void announceEdit();
  void refreshState();
  // The plan shown says the edited settings cannot load (no model in the
  // folder, or it does not fit): they are not applied.
  bool planRejectsEdit() const;
  void refreshContextCap();
  // The remote address and key in the fields answered a listing.
  bool remoteChecked() const;
  void askRemote(bool then_apply);
  // The plan of the last setPlan, shown with the remote check's state.
  void showPlan();

  CacheFormatChoices cache_formats_;
  EngineSettings applied_;
  QStringList recent_models_;
  bool writing_ = false;  // fields are being filled from settings, not edited
  DirectoryChooser choose_directory_;
  PlanView priced_;  // the plan as last set, before showPlan() adds the remote check
  // The remote address and key asked for models last, and the last pair
  // that answered; Apply waits for an answer when apply_after_check_.
  QString asked_url_;
  QString asked_key_;
  QString answered_url_;
  QString answered_key_;
  bool apply_after_check_ = false;
  QTimer* debounce_ = nullptr;

  QLineEdit* model_directory_ = nullptr;
  QPushButton* browse_ = nullptr;
  QComboBox* recent_ = nullptr;
  QLabel* model_issue_ = nullptr;
  QComboBox* backend_ = nullptr;
  RemoteEndpointFields* remote_ = nullptr;
  QList<QWidget*> local_only_;  // the groups that mean nothing for a remote engine
  DeviceSelector* devices_ = nullptr;
  QComboBox* split_ = nullptr;
  QDoubleSpinBox* reserve_ = nullptr;
  QSpinBox* max_context_ = nullptr;
  QLabel* max_context_cap_ = nullptr;  // shown when the model reads fewer tokens
  QComboBox* cache_keys_ = nullptr;    // the coding of keys: "fp16", "fp8", "q8", "q4"
  QComboBox* cache_values_ = nullptr;  // and of values
  QLabel* cache_summary_ = nullptr;    // the pair's name and bits per value
  QSpinBox* cache_tokens_ = nullptr;
  QLabel* cache_issue_ = nullptr;
  QSpinBox* host_cache_ = nullptr;
  DiskCacheGroup* disk_cache_ = nullptr;
  QSpinBox* residual_window_ = nullptr;
  QComboBox* reserve_pages_ = nullptr;
  QLabel* reserve_pages_hint_ = nullptr;
  QComboBox* cache_residence_ = nullptr;
  QLabel* cache_residence_hint_ = nullptr;
  QComboBox* cache_device_ = nullptr;
  QLabel* cache_device_issue_ = nullptr;
  QSpinBox* max_batch_ = nullptr;
  QSpinBox* chunk_size_ = nullptr;
  QDoubleSpinBox* temperature_ = nullptr;
  QSpinBox* top_k_ = nullptr;
  QDoubleSpinBox* top_p_ = nullptr;
  QDoubleSpinBox* min_p_ = nullptr;
  QDoubleSpinBox* repetition_penalty_ = nullptr;
  QComboBox* draft_method_ = nullptr;  // draft_method_ids()
  QSpinBox* draft_tokens_ = nullptr;
  QLineEdit* draft_model_ = nullptr;
  QPushButton* browse_draft_model_ = nullptr;
  QPlainTextEdit* system_prompt_ = nullptr;
  QComboBox* prompt_format_ = nullptr;
  QComboBox* context_overflow_ = nullptr;
  // DRY, XTC, top-nσ and mirostat that chats follow unless they set their own.
  TunedSamplingEditor* tuned_sampling_ = nullptr;
  QComboBox* default_preset_ = nullptr;  // data: the preset's name, "" for none
  PlanWidget* plan_ = nullptr;
  QLabel* reload_note_ = nullptr;
  QLabel* apply_blocked_ = nullptr;  // why Apply is disabled, next to it
  QPushButton* fit_button_ = nullptr;
  QPushButton* revert_button_ = nullptr;
  QPushButton* apply_button_ = nullptr;
};

}  // namespace quire::ui
