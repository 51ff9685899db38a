#include "quire/hub/hub_client.h"

#include <QDateTime>
#include <QNetworkAccessManager>
#include <QNetworkProxyFactory>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QTimer>
#include <QUrlQuery>
#include <algorithm>

#include "quire/hub/hub_error.h"
#include "quire/hub/hub_headers.h"

namespace quire::hub {
namespace {

// API answers are small; a bigger one is not the Hub answering.
constexpr qint64 kMaxApiBody = 64 * 1024 * 1024;

QString from_std(const std::string& text) {
  return QString::fromStdString(text);
}

QString encoded(const QString& segment) {
  return QString::fromLatin1(QUrl::toPercentEncoding(segment));
}

QString repo_path(const QString& repo) {
  // org/name keeps its slash; each half is encoded.
  const qsizetype slash = repo.indexOf(QLatin1Char('/'));
  if (slash < 0) return encoded(repo);
  return encoded(repo.left(slash)) + QLatin1Char('/') + encoded(repo.mid(slash + 1));
}

template <typename T, typename Parse>
void deliver(const QByteArray& body, const std::optional<HubFailure>& failure,
             const QString& failure_message, const HubClient::Answer<T>& answer, Parse parse) {
  if (failure) {
    answer(std::nullopt, failure_message);
    return;
  }
  try {
    answer(parse(std::string_view(body.constData(), static_cast<std::size_t>(body.size()))),
           QString());
  } catch (const HubProtocolError& error) {
    answer(std::nullopt, QString::fromUtf8(error.what()));
  }
}

}  // namespace

QString describe_hub_failure(const HubSettings& settings, const QString& repo, const QString& what,
                             const HubFailure& failure) {
  const QString said =
      failure.error_message.isEmpty() ? QString() : QStringLiteral(": ") + failure.error_message;
  const QString page = from_std(settings.endpoint) + QLatin1Char('/') + repo;
  const bool has_token = !settings.token.empty();
  if (failure.error_code == QLatin1String("GatedRepo") ||
      ((failure.status == 401 || failure.status == 403) &&
       failure.error_code != QLatin1String("RepoNotFound"))) {
    return QStringLiteral(
               "%1 is gated: the Hub refused %2 (HTTP %3%4). Accept the licence on the "
               "model's page, %5, while logged in, then %6.")
        .arg(repo, what)
        .arg(failure.status)
        .arg(said, page,
             has_token ? QStringLiteral("check that the token in HF_TOKEN or the token file "
                                        "belongs to that account and may read gated repositories")
                       : QStringLiteral("set a token: HF_TOKEN, or the token file %1")
                             .arg(from_std((settings.hf_home / "token").string())));
  }
  if (failure.error_code == QLatin1String("RepoNotFound") || failure.status == 401) {
    return QStringLiteral(
               "%1 was not found on %2 (HTTP %3%4). Check the name; a private repository "
               "needs a token (HF_TOKEN or the token file).")
        .arg(repo, from_std(settings.endpoint))
        .arg(failure.status)
        .arg(said);
  }
  if (failure.error_code == QLatin1String("RevisionNotFound"))
    return QStringLiteral("%1 has no such branch, tag or commit (%2%3).").arg(repo, what, said);
  if (failure.error_code == QLatin1String("EntryNotFound") || failure.status == 404)
    return QStringLiteral("%1: %2 was not found (HTTP 404%3).").arg(repo, what, said);
  if (failure.status == 429)
    return QStringLiteral(
               "The Hub kept refusing %1 for too many requests (HTTP 429%2); try again later.")
        .arg(what, said);
  if (failure.status > 0)
    return QStringLiteral("The Hub failed %1 (HTTP %2%3).").arg(what).arg(failure.status).arg(said);
  return QStringLiteral(
             "Could not reach %1 for %2: %3. Check the network, the proxy settings "
             "and HF_ENDPOINT; HF_HUB_OFFLINE=1 uses only the cache.")
      .arg(from_std(settings.endpoint), what, failure.network_text);
}

HubFailure failure_of(const QNetworkReply& reply) {
  HubFailure failure;
  failure.status = reply.attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
  failure.error_code = QString::fromUtf8(reply.rawHeader("X-Error-Code"));
  failure.error_message = QString::fromUtf8(reply.rawHeader("X-Error-Message"));
  failure.network_text = reply.errorString();
  return failure;
}

bool same_origin(const QUrl& a, const QUrl& b) {
  return a.scheme() == b.scheme() && a.host() == b.host() &&
         a.port(a.scheme() == QLatin1String("https") ? 443 : 80) ==
             b.port(b.scheme() == QLatin1String("https") ? 443 : 80);
}

qint64 retry_after_of(const QNetworkReply& reply) {
  const QByteArray value = reply.rawHeader("Retry-After");
  if (value.isEmpty()) return -1;
  const auto seconds = retry_after_seconds(value.toStdString(), QDateTime::currentSecsSinceEpoch());
  return seconds ? *seconds : -1;
}

bool is_transient(int status, int network_error) {
  if (status == 408 || status == 429 || status >= 500) return true;
  // A 2xx whose body broke off is judged by how it broke.
  if (status >= 300) return false;
  switch (static_cast<QNetworkReply::NetworkError>(network_error)) {
    case QNetworkReply::ConnectionRefusedError:
    case QNetworkReply::RemoteHostClosedError:
    case QNetworkReply::TimeoutError:
    case QNetworkReply::OperationCanceledError:
    case QNetworkReply::TemporaryNetworkFailureError:
    case QNetworkReply::NetworkSessionFailedError:
    case QNetworkReply::ProxyConnectionClosedError:
    case QNetworkReply::ProxyTimeoutError:
    case QNetworkReply::UnknownNetworkError:
    case QNetworkReply::HostNotFoundError:
      return true;
    default:
      return false;
  }
}

HubClient::HubClient(HubSettings settings, QObject* parent)
    : QObject(parent), settings_(std::move(settings)), network_(new QNetworkAccessManager(this)) {
  // Qt follows the system's proxy settings when this is on (and the
  // http_proxy/https_proxy variables on Linux).
  QNetworkProxyFactory::setUseSystemConfiguration(true);
}

HubClient::~HubClient() = default;

QUrl HubClient::url(const QString& encoded_path) const {
  return QUrl::fromEncoded((from_std(settings_.endpoint) + encoded_path).toUtf8());
}

QNetworkRequest HubClient::apiRequest(const QUrl& url) const {
  QNetworkRequest request(url);
  request.setRawHeader("Accept", "application/json");
  request.setRawHeader("User-Agent", "quire/0.1; hf-hub-client");
  if (!settings_.token.empty())
    request.setRawHeader("Authorization", QByteArray("Bearer ") + settings_.token.c_str());
  // The Hub redirects a renamed repository's API path relatively; no other host.
  request.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                       QNetworkRequest::SameOriginRedirectPolicy);
  return request;
}

std::optional<int> HubClient::retryDelayMs(int attempt, qint64 retry_after_s) const {
  if (attempt >= retry_.max_attempts) return std::nullopt;
  if (retry_after_s >= 0) {
    if (retry_after_s > retry_.max_retry_after_s) return std::nullopt;
    return static_cast<int>(retry_after_s * 1000);
  }
  qint64 delay = retry_.first_delay_ms;
  for (int i = 1; i < attempt && delay < retry_.max_delay_ms; ++i)
    delay *= 2;
  return static_cast<int>(std::min<qint64>(delay, retry_.max_delay_ms));
}

void HubClient::get(const QUrl& url, int attempt, BodyAnswer answer) {
  QNetworkReply* reply = network_->get(apiRequest(url));
  connect(reply, &QNetworkReply::finished, this, [this, reply, url, attempt, answer] {
    reply->deleteLater();
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    const QByteArray body = reply->read(kMaxApiBody);
    if (reply->error() == QNetworkReply::NoError && status >= 200 && status < 300) {
      answer(body, reply->rawHeader("Link"), std::nullopt);
      return;
    }
    if (is_transient(status, reply->error())) {
      if (const auto delay = retryDelayMs(attempt, status > 0 ? retry_after_of(*reply) : -1)) {
        QTimer::singleShot(*delay, this,
                           [this, url, attempt, answer] { get(url, attempt + 1, answer); });
        return;
      }
    }
    HubFailure failure = failure_of(*reply);
    if (failure.error_message.isEmpty())
      failure.error_message = from_std(error_message_of(body.toStdString()));
    answer(body, {}, failure);
  });
}

void HubClient::search(const SearchQuery& query, Answer<std::vector<ModelSummary>> answer) {
  QUrlQuery parameters;
  if (!query.search.isEmpty()) parameters.addQueryItem(QStringLiteral("search"), query.search);
  if (!query.author.isEmpty()) parameters.addQueryItem(QStringLiteral("author"), query.author);
  for (const QString& filter : query.filters)
    parameters.addQueryItem(QStringLiteral("filter"), filter);
  if (!query.sort.isEmpty()) parameters.addQueryItem(QStringLiteral("sort"), query.sort);
  const int limit = std::max(1, query.limit);
  parameters.addQueryItem(QStringLiteral("limit"), QString::number(std::min(limit, 100)));
  QUrl first = url(QStringLiteral("/api/models"));
  first.setQuery(parameters);

  auto results = std::make_shared<std::vector<ModelSummary>>();
  auto page = std::make_shared<std::function<void(const QUrl&)>>();
  *page = [this, limit, results, page, answer](const QUrl& address) {
    get(address, 1,
        [this, limit, results, page, answer](const QByteArray& body, const QByteArray& link,
                                             const std::optional<HubFailure>& failure) {
          const QString what = QStringLiteral("the search");
          if (failure) {
            answer(std::nullopt, describe_hub_failure(settings_, QString(), what, *failure));
            *page = nullptr;  // breaks the cycle
            return;
          }
          try {
            for (ModelSummary& model : parse_model_list(body.toStdString())) {
              if (static_cast<int>(results->size()) < limit) results->push_back(std::move(model));
            }
          } catch (const HubProtocolError& error) {
            answer(std::nullopt, QString::fromUtf8(error.what()));
            *page = nullptr;
            return;
          }
          const auto next = next_page_url(link.toStdString());
          if (next && static_cast<int>(results->size()) < limit) {
            (*page)(QUrl::fromEncoded(QByteArray::fromStdString(*next)));
            return;
          }
          answer(std::move(*results), QString());
          *page = nullptr;
        });
  };
  (*page)(first);
}

void HubClient::modelInfo(const QString& repo, const QString& revision, Answer<ModelInfo> answer) {
  const QString rev = revision.isEmpty() ? QStringLiteral("HEAD") : revision;
  QUrl address = url(QStringLiteral("/api/models/") + repo_path(repo) +
                     QStringLiteral("/revision/") + encoded(rev));
  address.setQuery(QStringLiteral("blobs=true"));
  get(address, 1,
      [this, repo, rev, answer](const QByteArray& body, const QByteArray&,
                                const std::optional<HubFailure>& failure) {
        const QString what = QStringLiteral("the file list of revision %1").arg(rev);
        deliver<ModelInfo>(
            body, failure,
            failure ? describe_hub_failure(settings_, repo, what, *failure) : QString(), answer,
            [](std::string_view text) { return parse_model_info(text); });
      });
}

void HubClient::refs(const QString& repo, Answer<RepoRefs> answer) {
  get(url(QStringLiteral("/api/models/") + repo_path(repo) + QStringLiteral("/refs")), 1,
      [this, repo, answer](const QByteArray& body, const QByteArray&,
                           const std::optional<HubFailure>& failure) {
        deliver<RepoRefs>(
            body, failure,
            failure
                ? describe_hub_failure(settings_, repo, QStringLiteral("the branch list"), *failure)
                : QString(),
            answer, [](std::string_view text) { return parse_refs(text); });
      });
}

void HubClient::tree(const QString& repo, const QString& revision, const QString& folder,
                     bool recursive, Answer<std::vector<TreeEntry>> answer) {
  QString path = QStringLiteral("/api/models/") + repo_path(repo) + QStringLiteral("/tree/") +
                 encoded(revision.isEmpty() ? QStringLiteral("main") : revision);
  if (!folder.isEmpty())
    path += QLatin1Char('/') + QString::fromLatin1(QUrl::toPercentEncoding(folder, "/"));
  QUrl first = url(path);
  if (recursive) first.setQuery(QStringLiteral("recursive=true"));

  auto entries = std::make_shared<std::vector<TreeEntry>>();
  auto page = std::make_shared<std::function<void(const QUrl&)>>();
  *page = [this, repo, entries, page, answer](const QUrl& address) {
    get(address, 1,
        [this, repo, entries, page, answer](const QByteArray& body, const QByteArray& link,
                                            const std::optional<HubFailure>& failure) {
          if (failure) {
            answer(std::nullopt, describe_hub_failure(settings_, repo,
                                                      QStringLiteral("the file tree"), *failure));
            *page = nullptr;
            return;
          }
          try {
            for (TreeEntry& entry : parse_tree(body.toStdString()))
              entries->push_back(std::move(entry));
          } catch (const HubProtocolError& error) {
            answer(std::nullopt, QString::fromUtf8(error.what()));
            *page = nullptr;
            return;
          }
          if (const auto next = next_page_url(link.toStdString())) {
            (*page)(QUrl::fromEncoded(QByteArray::fromStdString(*next)));
            return;
          }
          answer(std::move(*entries), QString());
          *page = nullptr;
        });
  };
  (*page)(first);
}

}  // namespace quire::hub
