#include "quire/hub/model_header_probe.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QPointer>
#include <QTimer>
#include <QtEndian>

#include "quire/hub/described_ranges.h"
#include "quire/hub/hub_cache.h"
#include "quire/hub/hub_client.h"
#include "quire/hub/hub_error.h"
#include "quire/hub/hub_headers.h"

namespace quire::hub {
namespace {

constexpr int kParallelFetches = 6;
constexpr int kMaxRedirects = 5;

// One ranged GET, its redirects and its retries; deletes itself when done.
class RangeFetch : public QObject {
 public:
  RangeFetch(HubClient* client, QString repo, QString path, QUrl url, qint64 first, qint64 last,
             std::function<void(const QByteArray&, const QString&)> done, QObject* context)
      : QObject(context),
        client_(client),
        repo_(std::move(repo)),
        path_(std::move(path)),
        start_url_(std::move(url)),
        first_(first),
        last_(last),
        done_(std::move(done)) {}

  void request(const QUrl& url, int redirects) {
    QNetworkRequest http(url);
    http.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                      QNetworkRequest::ManualRedirectPolicy);
    http.setRawHeader("Accept-Encoding", "identity");
    http.setRawHeader("User-Agent", "quire/0.1; hf-hub-client");
    http.setRawHeader("Range", "bytes=" + QByteArray::number(first_) + '-' +
                                   (last_ >= 0 ? QByteArray::number(last_) : QByteArray()));
    const std::string& token = client_->settings().token;
    // The token goes to the Hub only, never to the host that serves the bytes.
    if (!token.empty() && same_origin(url, start_url_))
      http.setRawHeader("Authorization", QByteArray("Bearer ") + token.c_str());
    body_.clear();
    QNetworkReply* reply = client_->network()->get(http);
    reply_ = reply;
    connect(reply, &QNetworkReply::readyRead, this, [this, reply] {
      const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
      if (status != 200 && status != 206) return;
      body_ += reply->readAll();
      // A server that ignored Range sends the whole file: stop once the
      // wanted bytes are here.
      if (status == 200 && last_ >= 0 && body_.size() > last_) {
        body_ = body_.mid(first_, last_ - first_ + 1);
        finish(body_, QString());
        reply->abort();
      } else if ((status == 206 || last_ < 0) &&
                 body_.size() > (last_ >= 0 ? last_ - first_ + 1 : limit())) {
        finish({}, QStringLiteral("the server sent more than was asked for"));
        reply->abort();
      }
    });
    connect(reply, &QNetworkReply::finished, this, [this, reply, redirects] {
      reply->deleteLater();
      if (over_ || reply != reply_) return;
      const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
      if (status >= 300 && status < 400) {
        const QUrl location =
            reply->url().resolved(QUrl::fromEncoded(reply->rawHeader("Location")));
        if (redirects >= kMaxRedirects || !location.isValid()) {
          finish({}, QStringLiteral("too many redirects"));
          return;
        }
        request(location, redirects + 1);
        return;
      }
      if (reply->error() == QNetworkReply::NoError && (status == 200 || status == 206)) {
        body_ += reply->readAll();
        if (status == 206) {
          const auto range = parse_content_range(reply->rawHeader("Content-Range").toStdString());
          if (!range || range->first != first_) {
            finish({}, QStringLiteral("the server answered another byte range"));
            return;
          }
        } else {
          body_ = body_.mid(first_, last_ >= 0 ? last_ - first_ + 1 : -1);
        }
        finish(body_, QString());
        return;
      }
      if (is_transient(status, reply->error())) {
        const qint64 retry_after = status > 0 ? retry_after_of(*reply) : -1;
        if (const auto delay = client_->retryDelayMs(attempt_, retry_after)) {
          ++attempt_;
          QTimer::singleShot(*delay, this, [this] { request(start_url_, 0); });
          return;
        }
      }
      // The Hub's own words: a gated repository says to accept its licence.
      finish({},
             describe_hub_failure(client_->settings(), repo_,
                                  QStringLiteral("a part of %1").arg(path_), failure_of(*reply)));
    });
  }

 private:
  static qint64 limit() { return ModelHeaderProbe::kMaxSmallFileBytes; }

  void finish(const QByteArray& bytes, const QString& error) {
    if (over_) return;
    over_ = true;
    done_(bytes, error);
    deleteLater();
  }

  HubClient* client_;
  QString repo_;
  QString path_;
  QUrl start_url_;
  qint64 first_;
  qint64 last_;
  std::function<void(const QByteArray&, const QString&)> done_;
  QPointer<QNetworkReply> reply_;
  QByteArray body_;
  int attempt_ = 1;
  bool over_ = false;
};

}  // namespace

void fetch_file_bytes(HubClient* client, const QString& repo, const QString& commit,
                      const QString& path, qint64 first, qint64 last,
                      std::function<void(const QByteArray& bytes, const QString& error)> done,
                      QObject* context) {
  const QUrl url =
      client->url(QStringLiteral("/") + repo + QStringLiteral("/resolve/") + commit +
                  QLatin1Char('/') + QString::fromLatin1(QUrl::toPercentEncoding(path, "/")));
  auto* fetch = new RangeFetch(client, repo, path, url, first, last, std::move(done), context);
  fetch->request(url, 0);
}

bool ModelHeaderProbe::isReadWhole(const std::string& name) {
  return name == "config.json" || name == "quantization_config.json" ||
         name == "generation_config.json" || name.ends_with(".safetensors.index.json");
}

ModelHeaderProbe::ModelHeaderProbe(HubClient* client, QString repo, Quantization quantization,
                                   QString folder, QObject* parent)
    : QObject(parent),
      client_(client),
      repo_(std::move(repo)),
      quantization_(std::move(quantization)),
      folder_(std::move(folder)) {}

void ModelHeaderProbe::start() {
  const std::string prefix =
      quantization_.subfolder.empty() ? std::string() : quantization_.subfolder + "/";
  try {
    for (const RepoFile& file : quantization_.files) {
      const std::string inside = file.path.substr(prefix.size());
      if (inside.find('/') != std::string::npos) continue;  // the model's own folder only
      const bool header = inside.ends_with(".safetensors");
      if (!header && !isReadWhole(inside)) continue;
      if (!header && file.size > kMaxSmallFileBytes)
        throw HubProtocolError(file.path + " is " + std::to_string(file.size) +
                               " bytes; a model's JSON file is far smaller");
      Job job;
      job.file = file;
      job.local = QDir(folder_).filePath(
          QString::fromStdString(checked_repo_path(inside).generic_string()));
      job.kind = header ? Job::Kind::Header : Job::Kind::Whole;
      jobs_.push_back(std::move(job));
    }
  } catch (const HubProtocolError& error) {
    over_ = true;
    emit failed(QString::fromUtf8(error.what()));
    return;
  }
  if (!QDir().mkpath(folder_)) {
    over_ = true;
    emit failed(QStringLiteral("Cannot create the folder %1.").arg(folder_));
    return;
  }
  for (int i = 0; i < kParallelFetches; ++i)
    runNext();
}

void ModelHeaderProbe::runNext() {
  if (over_) return;
  if (next_ >= jobs_.size()) {
    if (running_ == 0) {
      over_ = true;
      emit finished(folder_);
    }
    return;
  }
  // A copy: jobs_ grows while headers arrive.
  const Job job = jobs_[next_++];
  ++running_;
  switch (job.kind) {
    case Job::Kind::Header:
      fetchHeader(job);
      break;
    case Job::Kind::Range:
      fetchRange(job);
      break;
    case Job::Kind::Whole:
      fetchWhole(job);
      break;
  }
}

void ModelHeaderProbe::fetchWhole(const Job& job) {
  const QString local = job.local;
  const QString path = QString::fromStdString(job.file.path);
  fetch_file_bytes(
      client_, repo_, QString::fromStdString(quantization_.commit), path, 0, -1,
      [this, local, path](const QByteArray& bytes, const QString& error) {
        if (!error.isEmpty()) {
          jobDone(error);
          return;
        }
        QFile out(local);
        // Closed (flushed) before the job counts as done: the planner reads it next.
        if (!out.open(QIODevice::WriteOnly) || out.write(bytes) != bytes.size() || !out.flush()) {
          jobDone(QStringLiteral("Cannot write %1: %2").arg(local, out.errorString()));
          return;
        }
        out.close();
        jobDone(QString());
      },
      this);
}

void ModelHeaderProbe::fetchHeader(const Job& job) {
  const qint64 first_read = std::min<qint64>(kFirstReadBytes, job.file.size);
  const QString path = QString::fromStdString(job.file.path);
  const QString commit = QString::fromStdString(quantization_.commit);
  if (job.file.size < 8) {
    jobDone(QStringLiteral("%1 is %2 bytes, too short for a safetensors file.")
                .arg(path)
                .arg(job.file.size));
    return;
  }
  fetch_file_bytes(
      client_, repo_, commit, path, 0, first_read - 1,
      [this, job, path, commit](const QByteArray& start, const QString& error) {
        if (!error.isEmpty() || start.size() < 8) {
          jobDone(error.isEmpty() ? path + QStringLiteral(": the answer was too short") : error);
          return;
        }
        const quint64 length = qFromLittleEndian<quint64>(start.constData());
        if (length > static_cast<quint64>(kMaxHeaderBytes) ||
            static_cast<qint64>(length) > job.file.size - 8) {
          jobDone(QStringLiteral("%1 says its header is %2 bytes long, which the %3-byte file "
                                 "cannot hold: it is not a safetensors file.")
                      .arg(path)
                      .arg(length)
                      .arg(job.file.size));
          return;
        }
        const qint64 wanted = 8 + static_cast<qint64>(length);
        if (start.size() >= wanted) {
          writeHeaderFile(job, start.left(wanted));
          return;
        }
        fetch_file_bytes(
            client_, repo_, commit, path, start.size(), wanted - 1,
            [this, job, path, start](const QByteArray& rest, const QString& more_error) {
              if (!more_error.isEmpty()) {
                jobDone(more_error);
                return;
              }
              writeHeaderFile(job, start + rest);
            },
            this);
      },
      this);
}

void ModelHeaderProbe::writeHeaderFile(const Job& job, const QByteArray& header_with_length) {
  QFile out(job.local);
  // resize() past the end leaves a hole: the data area takes no disk space.
  if (!out.open(QIODevice::WriteOnly) ||
      out.write(header_with_length) != header_with_length.size() || !out.flush() ||
      !out.resize(job.file.size)) {
    jobDone(QStringLiteral("Cannot write %1: %2").arg(job.local, out.errorString()));
    return;
  }
  out.close();
  // The small tables the engine's checks read come next, a job each.
  try {
    const QByteArray json = header_with_length.mid(8);
    for (const ByteRange& range : described_data_ranges(
             std::string_view(json.constData(), static_cast<std::size_t>(json.size())),
             header_with_length.size())) {
      if (range.last >= job.file.size)
        throw HubProtocolError("a tensor of " + job.file.path + " ends past the file");
      Job more = job;
      more.kind = Job::Kind::Range;
      more.first = range.first;
      more.last = range.last;
      jobs_.push_back(std::move(more));
    }
  } catch (const HubProtocolError& error) {
    jobDone(QString::fromStdString(job.file.path) + QStringLiteral(": ") +
            QString::fromUtf8(error.what()));
    return;
  }
  jobDone(QString());
}

void ModelHeaderProbe::fetchRange(const Job& job) {
  const QString path = QString::fromStdString(job.file.path);
  fetch_file_bytes(
      client_, repo_, QString::fromStdString(quantization_.commit), path, job.first, job.last,
      [this, job, path](const QByteArray& bytes, const QString& error) {
        if (!error.isEmpty()) {
          jobDone(error);
          return;
        }
        QFile out(job.local);
        if (bytes.size() != job.last - job.first + 1 || !out.open(QIODevice::ReadWrite) ||
            !out.seek(job.first) || out.write(bytes) != bytes.size() || !out.flush()) {
          jobDone(QStringLiteral("Cannot write %1: %2").arg(job.local, out.errorString()));
          return;
        }
        out.close();
        jobDone(QString());
      },
      this);
}

void ModelHeaderProbe::jobDone(const QString& error) {
  --running_;
  if (over_) return;
  if (!error.isEmpty()) {
    over_ = true;
    emit failed(QStringLiteral("Could not read %1's headers: %2").arg(repo_, error));
    return;
  }
  runNext();
}

}  // namespace quire::hub
