#pragma once

// Every quantization a repository offers across its branches: the branch
// list first, then each branch's file list (with sizes and hashes), read a
// few at a time. A branch that fails to list is skipped with a note unless
// every branch fails.

#include <QObject>
#include <QString>
#include <QStringList>
#include <vector>

#include "quire/hub/repo_quantizations.h"

namespace quire::hub {

class HubClient;

class QuantizationSurvey : public QObject {
  Q_OBJECT

 public:
  // Repositories with more branches than this list the first ones (in
  // revision_before's order) and say so.
  static constexpr int kMaxBranches = 40;

  QuantizationSurvey(HubClient* client, QString repo, QObject* parent = nullptr);

  void start();
  const QString& repo() const { return repo_; }

 signals:
  // Sorted by branch (revision_before), then folder. Empty when the
  // repository holds no config.json anywhere: then `why` says what it holds.
  void finished(const std::vector<quire::hub::Quantization>& quantizations, const QString& why);
  void failed(const QString& error);

 private:
  void listBranches(const std::vector<std::string>& branches);
  void listNext();
  void finish();

  HubClient* client_;
  QString repo_;
  std::vector<std::string> branches_;
  std::size_t next_ = 0;
  int running_ = 0;
  std::vector<Quantization> found_;
  QStringList errors_;
  std::vector<std::string> file_names_;  // a sample of what the repository holds
  bool truncated_ = false;
  bool over_ = false;
};

}  // namespace quire::hub
