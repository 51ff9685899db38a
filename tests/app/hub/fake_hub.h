#pragma once

// A fake Hugging Face Hub for the tests: two loopback servers written from
// the Hub's documented API (../shared/reference/hf-hub.md), the Hub itself
// and a file host on another port that serves LFS files after the Hub's
// redirect, as the Hub's CDN does. Faults are switched on per test: a
// connection dropped mid-file, a stall, Range ignored, 429 with Retry-After,
// gated repositories, wrong bytes, a renamed repository's relative redirect,
// gzip-encoded text files.
// Every request is recorded, so tests can check that Authorization never
// reaches the file host.

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QMap>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QStringList>

class QTcpServer;
class QTcpSocket;

namespace quire::test {

struct FakeFile {
  QString path;
  QByteArray content;
  bool lfs = false;

  QByteArray gitSha1() const;  // the blob id: sha1("blob <size>\0" + content)
  QByteArray sha256() const;
  QByteArray etag() const { return lfs ? sha256() : gitSha1(); }
};

struct FakeBranch {
  QString name;
  QString commit;  // 40 hex
  QList<FakeFile> files;
};

struct FakeRepo {
  QString id;                  // org/name
  QList<FakeBranch> branches;  // the first is "main"
  QStringList tags;
  qint64 downloads = 0;
  qint64 likes = 0;
  QString last_modified = QStringLiteral("2026-01-01T00:00:00.000Z");
  QString gated;  // "" open, else "manual": files need the accepted token
};

struct FakeFaults {
  int drops = 0;  // the next N file answers close after drop_after bytes
  qint64 drop_after = 0;
  int stalls = 0;  // the next N file answers fall silent after stall_after bytes
  qint64 stall_after = 0;
  bool ignore_range = false;  // files are answered 200 and whole, Range or not
  int rate_limits = 0;        // the next N Hub answers are 429
  int retry_after_s = 1;
  bool wrong_bytes = false;  // LFS files are served with one byte changed
  qint64 size_lie = 0;       // added to every size the API lists
  bool gzip_text = false;    // text (git) files come gzip-encoded, without a length
  int file_delay_ms = 0;     // the file host answers after this long
};

struct SeenRequest {
  bool file_host = false;
  QByteArray method;
  QByteArray target;                      // path and query as sent
  QHash<QByteArray, QByteArray> headers;  // names in lower case
  QByteArray body;
};

class FakeHub : public QObject {
  Q_OBJECT

 public:
  explicit FakeHub(QObject* parent = nullptr);
  ~FakeHub() override;

  // Listens on two loopback ports; false when it cannot.
  bool start();
  QString endpoint() const;        // http://127.0.0.1:<hub port>
  QString fileHostOrigin() const;  // http://127.0.0.1:<file port>

  void addRepo(const FakeRepo& repo);
  // Requests for `old_id` are answered with a relative 307 to `new_id`.
  void addRename(const QString& old_id, const QString& new_id);
  // The token that opens gated repositories.
  void setAcceptedToken(const QByteArray& token) { accepted_token_ = token; }
  void setModelPageSize(int size) { model_page_size_ = size; }
  void setTreePageSize(int size) { tree_page_size_ = size; }

  FakeFaults& faults() { return faults_; }
  const QList<SeenRequest>& requests() const { return requests_; }
  // Requests to the file host that carried an Authorization header.
  int fileHostRequestsWithAuthorization() const;
  int fileHostRequests() const;
  // The most file host requests that were waiting for their answers at once.
  int mostConcurrentFileRequests() const { return most_concurrent_files_; }

 private:
  struct Answer {
    int status = 200;
    QList<QPair<QByteArray, QByteArray>> headers;
    QByteArray body;
    bool is_file_body = false;  // faults apply
    bool omit_length = false;   // the body ends when the connection closes
  };

  void onConnection(QTcpServer* server, bool file_host);
  void onReadable(QTcpSocket* socket, bool file_host);
  Answer answerHub(const SeenRequest& request);
  Answer answerFileHost(const SeenRequest& request);
  Answer answerApi(const QString& path, const QMap<QString, QStringList>& query,
                   const QByteArray& body);
  Answer answerResolve(const SeenRequest& request, const FakeRepo& repo, const QString& rest);
  Answer serveBytes(const SeenRequest& request, const QByteArray& content, const QByteArray& etag);
  void send(QTcpSocket* socket, const SeenRequest& request, Answer answer);

  const FakeRepo* findRepo(const QString& id) const;
  const FakeBranch* findBranch(const FakeRepo& repo, const QString& revision) const;

  QTcpServer* hub_ = nullptr;
  QTcpServer* files_ = nullptr;
  QList<FakeRepo> repos_;
  QMap<QString, QString> renames_;
  QByteArray accepted_token_;
  int model_page_size_ = 1000;
  int tree_page_size_ = 1000;
  FakeFaults faults_;
  QList<SeenRequest> requests_;
  QHash<QTcpSocket*, QByteArray> buffers_;
  QList<QPointer<QTcpSocket>> held_open_;
  int concurrent_files_ = 0;
  int most_concurrent_files_ = 0;
};

}  // namespace quire::test
