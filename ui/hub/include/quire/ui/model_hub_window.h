#pragma once

// "Get models": search the Hugging Face Hub, see each repository's
// quantizations with their download sizes and whether they fit this
// computer's devices, download them (pause, resume, cancel), and open or
// remove the models already here. The window draws what app/ gives it and
// says what the user asked for; it holds no logic of its own.
//
// Object names: "hubSearchText", "hubSort", "hubFormat", "hubSearchButton",
// "hubResults", "hubSearchStatus", "hubRepoTitle", "hubRepoStatus",
// "hubQuantizations", "hubDownloadButton", "hubDownloads", "hubPauseButton",
// "hubResumeButton", "hubCancelButton", "hubLocalModels", "hubOpenButton",
// "hubRemoveButton", "hubTokenText", "hubTokenSave", "hubTokenState".

#include <QList>
#include <QString>
#include <QWidget>

#include "quire/ui/model_hub_data.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QTreeWidget;

namespace quire::ui {

class ModelHubWindow : public QWidget {
  Q_OBJECT

 public:
  explicit ModelHubWindow(QWidget* parent = nullptr);

  HubSearchRequest searchRequest() const;

  void setSearching(const QString& text);
  // The search's answer; `error` non-empty replaces the list with it.
  void setResults(const QList<HubModelRow>& rows, const QString& error);
  const QList<HubModelRow>& results() const { return results_; }

  // The repository whose quantizations are shown, and what is happening.
  void showRepository(const QString& repo, const QString& status);
  QString repository() const { return repo_; }
  void setQuantizations(const QList<QuantizationRow>& rows, const QString& note);
  // Replaces the row with the same key (its verdict arrived, it finished).
  void updateQuantization(const QuantizationRow& row);
  const QList<QuantizationRow>& quantizations() const { return quantizations_; }
  // The key of the selected quantization, "" when none.
  QString selectedQuantization() const;
  void selectQuantization(const QString& key);

  void setDownloads(const QList<DownloadRow>& rows);
  const QList<DownloadRow>& downloads() const { return downloads_; }
  void setLocalModels(const QList<LocalModelRow>& rows);
  const QList<LocalModelRow>& localModels() const { return local_; }
  void selectLocalModel(const QString& id);

  // Where the Hub token comes from ("none", "the keyring", "HF_TOKEN").
  void setTokenState(const QString& text);

 signals:
  void searchRequested(const quire::ui::HubSearchRequest& request);
  void repositoryChosen(const QString& repo);
  void downloadRequested(const QString& repo, const QString& key);
  void pauseRequested(const QString& id);
  void resumeRequested(const QString& id);
  void cancelRequested(const QString& id);
  void openRequested(const QString& folder);
  void removeRequested(const QString& id);
  void tokenEntered(const QString& token);

 private:
  QWidget* buildSearch();
  QWidget* buildDetails();
  QWidget* buildLibrary();
  void fillQuantizationItem(int index);
  void refreshButtons();
  QString selectedDownload() const;
  QString selectedLocal() const;

  QLineEdit* search_text_ = nullptr;
  QComboBox* sort_ = nullptr;
  QComboBox* format_ = nullptr;
  QPushButton* search_button_ = nullptr;
  QLabel* search_status_ = nullptr;
  QListWidget* results_list_ = nullptr;
  QLabel* repo_title_ = nullptr;
  QLabel* repo_status_ = nullptr;
  QTreeWidget* quantization_list_ = nullptr;
  QPushButton* download_ = nullptr;
  QTreeWidget* download_list_ = nullptr;
  QPushButton* pause_ = nullptr;
  QPushButton* resume_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QTreeWidget* local_list_ = nullptr;
  QPushButton* open_ = nullptr;
  QPushButton* remove_ = nullptr;
  QLineEdit* token_text_ = nullptr;
  QLabel* token_state_ = nullptr;

  QList<HubModelRow> results_;
  QString repo_;
  QList<QuantizationRow> quantizations_;
  QList<DownloadRow> downloads_;
  QList<LocalModelRow> local_;
};

}  // namespace quire::ui
