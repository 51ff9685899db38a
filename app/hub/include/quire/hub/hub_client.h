#pragma once

// The Hub's HTTP API with Qt Network, on the thread that owns the client
// (nothing here blocks): search (/api/models with its Link pages),
// repository info with sizes and LFS hashes, branches and tags, file trees.
// Answers come back through callbacks; each failure is one message a user can
// act on (a gated repository's message says to accept the licence and set a
// token). 429 and server errors are retried as RetryPolicy says.

#include <QObject>
#include <QString>
#include <QStringList>
#include <QUrl>
#include <functional>
#include <optional>
#include <vector>

#include "quire/hub/hub_environment.h"
#include "quire/hub/hub_models.h"

class QNetworkAccessManager;
class QNetworkReply;
class QNetworkRequest;

namespace quire::hub {

struct RetryPolicy {
  int max_attempts = 5;       // tries of one request, the first included
  int first_delay_ms = 1000;  // doubled after each failure
  int max_delay_ms = 30'000;
  int max_retry_after_s = 300;  // a longer Retry-After fails at once
};

struct SearchQuery {
  QString search;
  QString author;
  QStringList filters;  // tags: "exl2", "gguf", ...
  QString sort;         // downloads, likes, lastModified, trendingScore, createdAt
  int limit = 20;       // results wanted; pages are followed until there are as many
};

// What a failed request got back, for the message.
struct HubFailure {
  int status = 0;         // HTTP status; 0 when none came
  QString error_code;     // X-Error-Code
  QString error_message;  // X-Error-Message, else the body's "error"
  QString network_text;   // Qt's description when no HTTP answer came
};

// The message for `failure` of `what` ("the file list of org/name").
QString describe_hub_failure(const HubSettings& settings, const QString& repo, const QString& what,
                             const HubFailure& failure);

class HubClient : public QObject {
  Q_OBJECT

 public:
  explicit HubClient(HubSettings settings, QObject* parent = nullptr);
  ~HubClient() override;

  const HubSettings& settings() const { return settings_; }
  // A token that arrived later (the keyring answers after the client is made).
  void setToken(const std::string& token) { settings_.token = token; }
  void setRetryPolicy(const RetryPolicy& policy) { retry_ = policy; }
  const RetryPolicy& retryPolicy() const { return retry_; }
  QNetworkAccessManager* network() const { return network_; }

  // {endpoint}/{path}, `path` already percent-encoded where it must be.
  QUrl url(const QString& encoded_path) const;
  // A GET of the Hub's API: JSON accepted, the token sent.
  QNetworkRequest apiRequest(const QUrl& url) const;

  template <typename T>
  using Answer = std::function<void(std::optional<T> value, const QString& error)>;

  void search(const SearchQuery& query, Answer<std::vector<ModelSummary>> answer);
  // The revision's files with sizes and LFS hashes (?blobs=true); "" means HEAD.
  void modelInfo(const QString& repo, const QString& revision, Answer<ModelInfo> answer);
  void refs(const QString& repo, Answer<RepoRefs> answer);
  void tree(const QString& repo, const QString& revision, const QString& folder, bool recursive,
            Answer<std::vector<TreeEntry>> answer);

  // Waits before another try of a request that failed `attempt` times; nullopt
  // when no try is left. `retry_after_s` is the server's wish (429), or -1.
  std::optional<int> retryDelayMs(int attempt, qint64 retry_after_s) const;

 private:
  using BodyAnswer = std::function<void(const QByteArray& body, const QByteArray& link,
                                        const std::optional<HubFailure>& failure)>;
  void get(const QUrl& url, int attempt, BodyAnswer answer);

  HubSettings settings_;
  RetryPolicy retry_;
  QNetworkAccessManager* network_ = nullptr;
};

// What a failed answer said: its status, the Hub's X-Error-Code and
// X-Error-Message headers, and Qt's description.
HubFailure failure_of(const QNetworkReply& reply);
// Same scheme, host and port: the token goes only where it came from.
bool same_origin(const QUrl& a, const QUrl& b);

// The seconds a 429 (or 503) answer asks to wait, -1 when it does not say.
qint64 retry_after_of(const QNetworkReply& reply);
// Whether another try may help: 408, 429, 5xx, and connections that broke.
bool is_transient(int status, int network_error);

}  // namespace quire::hub
