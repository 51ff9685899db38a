#include "quire/hub/file_download.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <filesystem>

#include "quire/hub/hub_client.h"
#include "quire/hub/hub_error.h"
#include "quire/hub/hub_headers.h"

namespace quire::hub {
namespace {

QString from_path(const std::filesystem::path& path) {
  return QString::fromStdString(path.string());
}

int status_of(const QNetworkReply& reply) {
  return reply.attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
}

// How long the file is waited for while another program (or download)
// holds its lock.
constexpr int kLockPollMs = 500;

}  // namespace

FileDownload::FileDownload(HubClient* client, HubCache cache, QString repo, QString commit,
                           RepoFile file, TransferOptions options, QObject* parent)
    : QObject(parent),
      client_(client),
      cache_(std::move(cache)),
      repo_(std::move(repo)),
      commit_(std::move(commit)),
      file_(std::move(file)),
      options_(options),
      hash_(file_.lfs ? QCryptographicHash::Sha256 : QCryptographicHash::Sha1) {
  stall_timer_.setSingleShot(true);
  stall_timer_.setInterval(options_.stall_timeout_ms);
  connect(&stall_timer_, &QTimer::timeout, this, [this] {
    QNetworkReply* reply = reply_.data();
    if (reply == nullptr) return;
    stalled_ = true;
    reply->abort();
  });
  const QString path = QString::fromStdString(file_.path);
  resolve_url_ =
      client_->url(QStringLiteral("/") + repo_ + QStringLiteral("/resolve/") + commit_ +
                   QLatin1Char('/') + QString::fromLatin1(QUrl::toPercentEncoding(path, "/")));
}

FileDownload::~FileDownload() {
  if (QNetworkReply* reply = reply_.data()) reply->abort();
  unlock();
}

void FileDownload::start() {
  const std::string repo = repo_.toStdString();
  if (cache_.has_blob(repo, file_.etag())) {
    finish(true, QString());
    return;
  }
  if (!lock()) {
    if (!waiting_for_lock_) {
      waiting_for_lock_ = true;
      emit note(QStringLiteral("%1: another download of the same file holds its lock; waiting")
                    .arg(QString::fromStdString(file_.path)));
    }
    QTimer::singleShot(kLockPollMs, this, [this] {
      if (!done_) start();
    });
    return;
  }
  if (cache_.has_blob(repo, file_.etag())) {  // another program finished it meanwhile
    unlock();
    finish(true, QString());
    return;
  }
  if (!openPartial()) return;
  if (written_ == file_.size) {
    complete();
    return;
  }
  if (written_ > 0)
    emit note(QStringLiteral("%1: resuming at %2 of %3 bytes")
                  .arg(QString::fromStdString(file_.path))
                  .arg(written_)
                  .arg(file_.size));
  request(resolve_url_, true, 0);
}

bool FileDownload::lock() {
  if (lock_fd_ >= 0) return true;
  const std::filesystem::path path = cache_.lock_path(repo_.toStdString(), file_.etag());
  std::error_code error;
  std::filesystem::create_directories(path.parent_path(), error);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0664);
  if (fd < 0) {
    fail(QStringLiteral("Cannot create the lock file %1.").arg(from_path(path)), false);
    return false;
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return false;
  }
  lock_fd_ = fd;
  return true;
}

void FileDownload::unlock() {
  if (lock_fd_ < 0) return;
  ::flock(lock_fd_, LOCK_UN);
  ::close(lock_fd_);
  lock_fd_ = -1;
}

bool FileDownload::openPartial() {
  const std::filesystem::path path = cache_.incomplete_path(repo_.toStdString(), file_.etag());
  std::error_code error;
  std::filesystem::create_directories(path.parent_path(), error);
  partial_.setFileName(from_path(path));
  if (!partial_.open(QIODevice::ReadWrite)) {
    fail(QStringLiteral("Cannot write %1: %2").arg(partial_.fileName(), partial_.errorString()),
         false);
    return false;
  }
  written_ = partial_.size();
  if (written_ > file_.size) {  // not this file's beginning: start again
    partial_.resize(0);
    written_ = 0;
  }
  // The hash covers what is already on disk, so that a resumed file is
  // checked whole.
  hash_.reset();
  if (!file_.lfs) hash_.addData("blob " + QByteArray::number(file_.size) + '\0');
  partial_.seek(0);
  hash_.addData(&partial_);
  partial_.seek(written_);
  emit advanced(written_);
  return true;
}

void FileDownload::request(const QUrl& url, bool send_token, int redirects) {
  QNetworkRequest http_request(url);
  http_request.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                            QNetworkRequest::ManualRedirectPolicy);
  if (file_.lfs) {
    // Weights: uncompressed, so that Range offsets are the file's.
    http_request.setRawHeader("Accept-Encoding", "identity");
    if (written_ > 0)
      http_request.setRawHeader("Range", "bytes=" + QByteArray::number(written_) + '-');
  } else if (written_ > 0) {
    // Text files (git, not LFS) are small and may come gzip-encoded, which Qt
    // decodes when it asks for it itself; they start again rather than resume.
    resetPartial();
  }
  http_request.setRawHeader("User-Agent", "quire/0.1; hf-hub-client");
  const std::string& token = client_->settings().token;
  if (send_token && !token.empty())
    http_request.setRawHeader("Authorization", QByteArray("Bearer ") + token.c_str());

  stalled_ = false;
  accepting_body_ = false;
  QNetworkReply* reply = client_->network()->get(http_request);
  reply_ = reply;
  const qint64 bytes_before = written_;
  connect(reply, &QNetworkReply::metaDataChanged, this, &FileDownload::onHeaders);
  connect(reply, &QNetworkReply::readyRead, this, &FileDownload::onData);
  connect(
      reply, &QNetworkReply::finished, this, [this, reply, send_token, redirects, bytes_before] {
        reply->deleteLater();
        if (reply != reply_ || done_) return;
        stall_timer_.stop();
        const int status = status_of(*reply);
        if (status >= 300 && status < 400) {
          const QUrl location =
              reply->url().resolved(QUrl::fromEncoded(reply->rawHeader("Location")));
          if (redirects >= options_.max_redirects || !location.isValid()) {
            fail(QStringLiteral("%1: too many redirects.").arg(QString::fromStdString(file_.path)),
                 false);
            return;
          }
          // The token goes to the Hub only, never to the host that serves the bytes.
          request(location, send_token && same_origin(location, reply->url()), redirects + 1);
          return;
        }
        if (written_ > bytes_before) attempt_ = 1;  // progress: the tries count again
        onFinished();
      });
  stall_timer_.start();
}

void FileDownload::onHeaders() {
  QNetworkReply* reply = reply_;
  if (!reply || done_) return;
  const int status = status_of(*reply);
  const QString path = QString::fromStdString(file_.path);
  if (!reply->rawHeader("X-Repo-Commit").isEmpty()) {
    // The Hub's own answer: its metadata must name the blob that was listed.
    // A compressed answer's length is not the file's, so only its etag counts.
    const QByteArray encoding = reply->rawHeader("Content-Encoding").trimmed().toLower();
    const bool encoded = !encoding.isEmpty() && encoding != "identity";
    try {
      FileMetadata metadata;
      const HeaderLookup headers = [reply](std::string_view name) -> std::optional<std::string> {
        const QByteArray key(name.data(), static_cast<qsizetype>(name.size()));
        if (!reply->hasRawHeader(key)) return std::nullopt;
        return reply->rawHeader(key).toStdString();
      };
      if (encoded) {
        metadata.etag = normalize_etag(
            headers("X-Linked-Etag").value_or(headers("ETag").value_or(std::string())));
        metadata.size = file_.size;
      } else {
        metadata = file_metadata(headers, /*redirected=*/status != 200);
      }
      if (metadata.etag != file_.etag() || (file_.size >= 0 && metadata.size != file_.size)) {
        fail(QStringLiteral("%1 changed on the Hub while it was being downloaded (its blob is "
                            "now %2); download again.")
                 .arg(path, QString::fromStdString(metadata.etag)),
             true);
        return;
      }
    } catch (const HubProtocolError& error) {
      if (status >= 200 && status < 400) {
        fail(path + QStringLiteral(": ") + QString::fromUtf8(error.what()), false);
        return;
      }
    }
  }
  if (status == 200 && written_ > 0) {
    restartFromZero(
        QStringLiteral("the server ignored the resume request; starting %1 again").arg(path));
  } else if (status == 206) {
    const auto range = parse_content_range(reply->rawHeader("Content-Range").toStdString());
    if (!range || range->first != written_) {
      // Bytes from elsewhere in the file: nothing of this answer is kept.
      restartFromZero(
          QStringLiteral("the server resumed %1 at the wrong place; starting again").arg(path));
      reply_ = nullptr;
      reply->abort();
      retryOrFail(QString(), -1, QString());
      return;
    }
  }
  accepting_body_ = status == 200 || status == 206;
}

void FileDownload::onData() {
  QNetworkReply* reply = reply_;
  if (!reply || done_) return;
  stall_timer_.start();
  const QByteArray data = reply->readAll();
  if (!accepting_body_ || data.isEmpty()) return;
  if (written_ + data.size() > file_.size) {
    fail(QStringLiteral("%1 is bigger than the %2 bytes the Hub listed; it is not kept.")
             .arg(QString::fromStdString(file_.path))
             .arg(file_.size),
         true);
    return;
  }
  if (partial_.write(data) != data.size()) {
    fail(QStringLiteral("Cannot write %1: %2").arg(partial_.fileName(), partial_.errorString()),
         false);
    return;
  }
  hash_.addData(data);
  written_ += data.size();
  emit advanced(data.size());
}

void FileDownload::onFinished() {
  QNetworkReply* reply = reply_;
  reply_ = nullptr;
  partial_.flush();
  const int status = status_of(*reply);
  const QString path = QString::fromStdString(file_.path);
  const auto network_error = reply->error();
  if (status == 416) {
    restartFromZero(QStringLiteral("the server refused to resume %1; starting again").arg(path));
    retryOrFail(QString(), -1, QStringLiteral("%1: the server refused every range.").arg(path));
    return;
  }
  if (status >= 400 || network_error != QNetworkReply::NoError || stalled_) {
    HubFailure failure = failure_of(*reply);
    if (stalled_)
      failure.network_text =
          QStringLiteral("no data for %1 s").arg(options_.stall_timeout_ms / 1000.0);
    // A transfer that began (2xx) and then broke or stalled is no failure of
    // the Hub's answer: the partial file stays for the next run.
    const QString final_error =
        status >= 200 && status < 300
            ? QStringLiteral(
                  "%1: the transfer kept breaking off (%2); run the download again to "
                  "resume it.")
                  .arg(path, failure.network_text)
            : describe_hub_failure(client_->settings(), repo_,
                                   QStringLiteral("the file %1").arg(path), failure);
    if (stalled_ || is_transient(status, network_error)) {
      QString why;
      if (stalled_)
        why = QStringLiteral("%1 stalled").arg(path);
      else if (status == 429)
        why = QStringLiteral("the Hub asks to slow down (HTTP 429)");
      else if (status >= 200 && status < 300)
        why = QStringLiteral("%1: the connection closed at %2 of %3 bytes")
                  .arg(path)
                  .arg(written_)
                  .arg(file_.size);
      else if (status > 0)
        why = QStringLiteral("%1: HTTP %2").arg(path).arg(status);
      else
        why = QStringLiteral("%1: %2").arg(path, reply->errorString());
      retryOrFail(why, status > 0 ? retry_after_of(*reply) : -1, final_error);
    } else {
      fail(final_error, false);
    }
    return;
  }
  if (written_ < file_.size) {
    retryOrFail(QStringLiteral("%1: the connection closed at %2 of %3 bytes")
                    .arg(path)
                    .arg(written_)
                    .arg(file_.size),
                -1, QStringLiteral("%1: the connection kept closing early.").arg(path));
    return;
  }
  complete();
}

void FileDownload::restartFromZero(const QString& why) {
  emit note(why);
  resetPartial();
}

void FileDownload::resetPartial() {
  emit advanced(-written_);
  partial_.resize(0);
  partial_.seek(0);
  written_ = 0;
  hash_.reset();
  if (!file_.lfs) hash_.addData("blob " + QByteArray::number(file_.size) + '\0');
}

void FileDownload::retryOrFail(const QString& why, qint64 retry_after_s,
                               const QString& final_error) {
  const std::optional<int> delay = client_->retryDelayMs(attempt_, retry_after_s);
  if (!delay) {
    fail(final_error.isEmpty() ? why : final_error, false);
    return;
  }
  ++attempt_;
  if (!why.isEmpty())
    emit note(QStringLiteral("%1; trying again in %2 s (try %3 of %4)")
                  .arg(why)
                  .arg(*delay / 1000.0)
                  .arg(attempt_)
                  .arg(client_->retryPolicy().max_attempts));
  QTimer::singleShot(*delay, this, [this] {
    if (!done_) request(resolve_url_, true, 0);
  });
}

void FileDownload::complete() {
  const QString path = QString::fromStdString(file_.path);
  const QByteArray digest = hash_.result().toHex();
  const std::string& expected = file_.lfs ? file_.lfs->sha256 : file_.blob_id;
  if (digest.toStdString() != expected) {
    fail(QStringLiteral("%1 does not match its %2 (expected %3, got %4); the downloaded copy "
                        "was discarded. Download again; if it repeats, the Hub or a proxy is "
                        "serving a damaged file.")
             .arg(path, file_.lfs ? QStringLiteral("SHA-256") : QStringLiteral("git hash"),
                  QString::fromStdString(expected), QString::fromLatin1(digest)),
         true);
    return;
  }
  partial_.close();
  try {
    cache_.commit_blob(repo_.toStdString(), file_.etag(),
                       cache_.incomplete_path(repo_.toStdString(), file_.etag()));
  } catch (const std::exception& error) {
    fail(QStringLiteral("%1 could not enter the cache: %2")
             .arg(path, QString::fromUtf8(error.what())),
         false);
    return;
  }
  unlock();
  finish(true, QString());
}

void FileDownload::cancel() {
  if (done_) return;
  fail(QStringLiteral("Cancelled."), true);
}

void FileDownload::stop() {
  if (done_) return;
  fail(QStringLiteral("Stopped."), false);
}

void FileDownload::fail(const QString& error, bool drop_partial) {
  if (done_) return;
  stall_timer_.stop();
  if (QNetworkReply* reply = reply_) {
    reply_ = nullptr;
    reply->abort();
  }
  if (partial_.isOpen()) partial_.close();
  if (drop_partial && !partial_.fileName().isEmpty()) {
    emit advanced(-written_);
    QFile::remove(partial_.fileName());
    written_ = 0;
  }
  unlock();
  finish(false, error);
}

void FileDownload::finish(bool ok, const QString& error) {
  if (done_) return;
  done_ = true;
  emit finished(ok, error);
}

}  // namespace quire::hub
