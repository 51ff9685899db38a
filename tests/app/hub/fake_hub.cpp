#include "fake_hub.h"

#include <zlib.h>

#include <QCryptographicHash>
#include <QHostAddress>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>
#include <QUrl>
#include <QUrlQuery>

namespace quire::test {
namespace {

QByteArray reason_of(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 206:
      return "Partial Content";
    case 302:
      return "Found";
    case 307:
      return "Temporary Redirect";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 416:
      return "Range Not Satisfiable";
    case 429:
      return "Too Many Requests";
    default:
      return "Status";
  }
}

// "bytes=N-" or "bytes=N-M"; false when absent or another shape.
bool parse_range(const QByteArray& header, qint64 size, qint64* first, qint64* last) {
  if (!header.startsWith("bytes=")) return false;
  const QByteArray spec = header.mid(6);
  const qsizetype dash = spec.indexOf('-');
  if (dash <= 0) return false;
  bool ok = false;
  *first = spec.left(dash).toLongLong(&ok);
  if (!ok) return false;
  const QByteArray end = spec.mid(dash + 1);
  *last = end.isEmpty() ? size - 1 : std::min(end.toLongLong(&ok), size - 1);
  return ok;
}

// `data` in gzip's format (deflate with a gzip header), as web servers send it.
QByteArray gzip(const QByteArray& data) {
  z_stream stream{};
  if (deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return {};
  QByteArray out(static_cast<qsizetype>(deflateBound(&stream, static_cast<uLong>(data.size()))),
                 Qt::Uninitialized);
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.constData()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  deflate(&stream, Z_FINISH);
  out.resize(static_cast<qsizetype>(stream.total_out));
  deflateEnd(&stream);
  return out;
}

}  // namespace

QByteArray FakeFile::gitSha1() const {
  QCryptographicHash hash(QCryptographicHash::Sha1);
  hash.addData("blob " + QByteArray::number(content.size()) + '\0');
  hash.addData(content);
  return hash.result().toHex();
}

QByteArray FakeFile::sha256() const {
  return QCryptographicHash::hash(content, QCryptographicHash::Sha256).toHex();
}

FakeHub::FakeHub(QObject* parent)
    : QObject(parent), hub_(new QTcpServer(this)), files_(new QTcpServer(this)) {}

FakeHub::~FakeHub() {
  for (const QPointer<QTcpSocket>& socket : held_open_)
    if (socket) socket->abort();
}

bool FakeHub::start() {
  if (!hub_->listen(QHostAddress::LocalHost) || !files_->listen(QHostAddress::LocalHost))
    return false;
  connect(hub_, &QTcpServer::newConnection, this, [this] { onConnection(hub_, false); });
  connect(files_, &QTcpServer::newConnection, this, [this] { onConnection(files_, true); });
  return true;
}

QString FakeHub::endpoint() const {
  return QStringLiteral("http://127.0.0.1:%1").arg(hub_->serverPort());
}

QString FakeHub::fileHostOrigin() const {
  return QStringLiteral("http://127.0.0.1:%1").arg(files_->serverPort());
}

void FakeHub::addRepo(const FakeRepo& repo) {
  repos_.append(repo);
}

void FakeHub::addRename(const QString& old_id, const QString& new_id) {
  renames_.insert(old_id, new_id);
}

int FakeHub::fileHostRequestsWithAuthorization() const {
  int count = 0;
  for (const SeenRequest& request : requests_)
    if (request.file_host && request.headers.contains("authorization")) ++count;
  return count;
}

int FakeHub::fileHostRequests() const {
  int count = 0;
  for (const SeenRequest& request : requests_)
    if (request.file_host) ++count;
  return count;
}

const FakeRepo* FakeHub::findRepo(const QString& id) const {
  for (const FakeRepo& repo : repos_)
    if (repo.id == id) return &repo;
  return nullptr;
}

const FakeBranch* FakeHub::findBranch(const FakeRepo& repo, const QString& revision) const {
  const QString name = revision == QLatin1String("HEAD") ? QStringLiteral("main") : revision;
  for (const FakeBranch& branch : repo.branches)
    if (branch.name == name || branch.commit == name) return &branch;
  return nullptr;
}

void FakeHub::onConnection(QTcpServer* server, bool file_host) {
  while (QTcpSocket* socket = server->nextPendingConnection()) {
    connect(socket, &QTcpSocket::readyRead, this,
            [this, socket, file_host] { onReadable(socket, file_host); });
    connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
    connect(socket, &QObject::destroyed, this, [this, socket] { buffers_.remove(socket); });
  }
}

void FakeHub::onReadable(QTcpSocket* socket, bool file_host) {
  QByteArray& buffer = buffers_[socket];
  buffer += socket->readAll();
  const qsizetype head_end = buffer.indexOf("\r\n\r\n");
  if (head_end < 0) return;
  const QList<QByteArray> lines = buffer.left(head_end).split('\n');
  SeenRequest request;
  request.file_host = file_host;
  const QList<QByteArray> first = lines.value(0).trimmed().split(' ');
  request.method = first.value(0);
  request.target = first.value(1);
  for (qsizetype i = 1; i < lines.size(); ++i) {
    const qsizetype colon = lines[i].indexOf(':');
    if (colon > 0)
      request.headers.insert(lines[i].left(colon).trimmed().toLower(),
                             lines[i].mid(colon + 1).trimmed());
  }
  const qint64 body_length = request.headers.value("content-length").toLongLong();
  if (buffer.size() < head_end + 4 + body_length) return;
  request.body = buffer.mid(head_end + 4, body_length);
  buffer.clear();
  requests_.append(request);
  if (file_host && faults_.file_delay_ms > 0) {
    most_concurrent_files_ = std::max(most_concurrent_files_, ++concurrent_files_);
    QTimer::singleShot(faults_.file_delay_ms, socket, [this, socket, request] {
      --concurrent_files_;
      send(socket, request, answerFileHost(request));
    });
    return;
  }
  send(socket, request, file_host ? answerFileHost(request) : answerHub(request));
}

FakeHub::Answer FakeHub::answerHub(const SeenRequest& request) {
  if (faults_.rate_limits > 0) {
    --faults_.rate_limits;
    Answer answer;
    answer.status = 429;
    answer.headers = {{"Retry-After", QByteArray::number(faults_.retry_after_s)},
                      {"RateLimit", "\"api\";r=0;t=" + QByteArray::number(faults_.retry_after_s)},
                      {"RateLimit-Policy", "\"fixed window\";\"api\";q=500;w=300"},
                      {"Content-Type", "application/json"}};
    answer.body = R"({"error":"You have exceeded our hourly quotas for action: api."})";
    return answer;
  }
  const QUrl url = QUrl::fromEncoded("http://hub" + request.target);
  const QString path = url.path(QUrl::FullyDecoded);
  // A renamed repository: a relative redirect to the same path under the new name.
  for (auto rename = renames_.cbegin(); rename != renames_.cend(); ++rename) {
    for (const QString& prefix : {QStringLiteral("/"), QStringLiteral("/api/models/")}) {
      const QString old_path = prefix + rename.key();
      if (path != old_path && !path.startsWith(old_path + QLatin1Char('/'))) continue;
      QByteArray location =
          QUrl::toPercentEncoding(prefix + rename.value() + path.mid(old_path.size()), "/");
      if (url.hasQuery()) location += '?' + url.query(QUrl::FullyEncoded).toUtf8();
      Answer answer;
      answer.status = 307;
      answer.headers = {{"Location", location}};
      return answer;
    }
  }
  if (path.startsWith(QLatin1String("/api/"))) {
    QMap<QString, QStringList> query;
    for (const auto& item : QUrlQuery(url).queryItems(QUrl::FullyDecoded))
      query[item.first].append(item.second);
    return answerApi(path, query, request.body);
  }
  // /{org}/{name}/resolve/{revision}/{path}
  const QStringList parts = path.mid(1).split(QLatin1Char('/'));
  if (parts.size() >= 5 && parts[2] == QLatin1String("resolve")) {
    const QString id = parts[0] + QLatin1Char('/') + parts[1];
    if (const FakeRepo* repo = findRepo(id))
      return answerResolve(request, *repo, parts.mid(3).join(QLatin1Char('/')));
    Answer answer;
    answer.status = 401;
    answer.headers = {{"X-Error-Code", "RepoNotFound"},
                      {"X-Error-Message", "Repository not found"}};
    return answer;
  }
  Answer answer;
  answer.status = 404;
  return answer;
}

FakeHub::Answer FakeHub::answerResolve(const SeenRequest& request, const FakeRepo& repo,
                                       const QString& rest) {
  Answer answer;
  if (!repo.gated.isEmpty()) {
    const QByteArray authorization = request.headers.value("authorization");
    if (authorization.isEmpty() || authorization != "Bearer " + accepted_token_) {
      answer.status = authorization.isEmpty() ? 401 : 403;
      answer.headers = {
          {"X-Error-Code", "GatedRepo"},
          {"X-Error-Message",
           "Access to model " + repo.id.toUtf8() +
               " is restricted. You must have access to it and be authenticated to access it. "
               "Please log in."}};
      return answer;
    }
  }
  const qsizetype slash = rest.indexOf(QLatin1Char('/'));
  const FakeBranch* branch = findBranch(repo, rest.left(slash));
  if (branch == nullptr) {
    answer.status = 404;
    answer.headers = {{"X-Error-Code", "RevisionNotFound"},
                      {"X-Error-Message", "Invalid rev id: " + rest.left(slash).toUtf8()}};
    return answer;
  }
  const QString file_path = rest.mid(slash + 1);
  for (const FakeFile& file : branch->files) {
    if (file.path != file_path) continue;
    if (!file.lfs && faults_.gzip_text) {
      // As the Hub's front may answer text: compressed, whole, with no length.
      answer.headers = {{"ETag", '"' + file.gitSha1() + '"'},
                        {"Content-Encoding", "gzip"},
                        {"Content-Type", "text/plain; charset=utf-8"},
                        {"X-Repo-Commit", branch->commit.toUtf8()}};
      answer.body = gzip(file.content);
      answer.omit_length = true;
      return answer;
    }
    if (!file.lfs) {
      answer = serveBytes(request, file.content, file.gitSha1());
      answer.headers.append({"X-Repo-Commit", branch->commit.toUtf8()});
      return answer;
    }
    answer.status = 302;
    answer.headers = {
        {"Location", fileHostOrigin().toUtf8() + "/repos/" + file.sha256() +
                         "?X-Amz-Signature=fake&response-content-disposition=attachment"},
        {"X-Repo-Commit", branch->commit.toUtf8()},
        {"X-Linked-Etag", '"' + file.sha256() + '"'},
        {"X-Linked-Size", QByteArray::number(file.content.size() + faults_.size_lie)},
        {"ETag", '"' + file.gitSha1() + '"'}};
    answer.body = "Found. Redirecting to " + answer.headers[0].second;
    return answer;
  }
  answer.status = 404;
  answer.headers = {{"X-Error-Code", "EntryNotFound"},
                    {"X-Error-Message", "Entry not found"},
                    {"X-Repo-Commit", branch->commit.toUtf8()}};
  return answer;
}

FakeHub::Answer FakeHub::answerFileHost(const SeenRequest& request) {
  const QByteArray path = request.target.left(request.target.indexOf('?'));
  const QByteArray sha = path.mid(path.lastIndexOf('/') + 1);
  for (const FakeRepo& repo : repos_)
    for (const FakeBranch& branch : repo.branches)
      for (const FakeFile& file : branch.files) {
        if (!file.lfs || file.sha256() != sha) continue;
        QByteArray content = file.content;
        if (faults_.wrong_bytes && !content.isEmpty()) content[content.size() / 2] ^= 0x5a;
        Answer answer = serveBytes(request, content, sha);
        answer.is_file_body = true;
        return answer;
      }
  Answer answer;
  answer.status = 404;
  answer.body = "<Error><Code>NoSuchKey</Code></Error>";
  return answer;
}

FakeHub::Answer FakeHub::serveBytes(const SeenRequest& request, const QByteArray& content,
                                    const QByteArray& etag) {
  Answer answer;
  answer.headers = {{"ETag", '"' + etag + '"'},
                    {"Accept-Ranges", "bytes"},
                    {"Content-Type", "application/octet-stream"}};
  qint64 first = 0;
  qint64 last = 0;
  const QByteArray range = request.headers.value("range");
  if (!faults_.ignore_range && parse_range(range, content.size(), &first, &last)) {
    if (first >= content.size()) {
      answer.status = 416;
      answer.headers.append({"Content-Range", "bytes */" + QByteArray::number(content.size())});
      return answer;
    }
    answer.status = 206;
    answer.headers.append({"Content-Range", "bytes " + QByteArray::number(first) + '-' +
                                                QByteArray::number(last) + '/' +
                                                QByteArray::number(content.size())});
    answer.body = content.mid(first, last - first + 1);
  } else {
    answer.body = content;
  }
  answer.is_file_body = true;
  return answer;
}

void FakeHub::send(QTcpSocket* socket, const SeenRequest& request, Answer answer) {
  QByteArray head =
      "HTTP/1.1 " + QByteArray::number(answer.status) + ' ' + reason_of(answer.status) + "\r\n";
  for (const auto& header : answer.headers)
    head += header.first + ": " + header.second + "\r\n";
  if (!answer.omit_length)
    head += "Content-Length: " + QByteArray::number(answer.body.size()) + "\r\n";
  head += "Connection: close\r\n\r\n";
  const bool head_only = request.method == "HEAD";
  QByteArray body = head_only ? QByteArray() : answer.body;
  if (answer.is_file_body && !head_only && answer.status / 100 == 2) {
    if (faults_.drops > 0 && faults_.drop_after < body.size()) {
      --faults_.drops;
      socket->write(head + body.left(faults_.drop_after));
      socket->disconnectFromHost();  // after the bytes above are written
      return;
    }
    if (faults_.stalls > 0 && faults_.stall_after < body.size()) {
      --faults_.stalls;
      socket->write(head + body.left(faults_.stall_after));
      held_open_.append(socket);  // silent until the client gives up
      return;
    }
  }
  socket->write(head + body);
  socket->disconnectFromHost();
}

}  // namespace quire::test
