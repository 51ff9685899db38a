// The system's proxy settings reach the Hub client: with http_proxy set (as
// a desktop session or a company network sets it), the Hub's API is asked
// through the proxy, by absolute URL, as HTTP proxies are spoken to.

#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

#include "hub_test_support.h"
#include "quire/hub/hub_client.h"
#include "test_main.h"

namespace {

// Answers every request with an empty model list and keeps its first line.
class RecordingProxy : public QObject {
 public:
  bool start() {
    connect(&server_, &QTcpServer::newConnection, this, [this] {
      while (QTcpSocket* socket = server_.nextPendingConnection()) {
        connect(socket, &QTcpSocket::readyRead, this, [this, socket] {
          buffer_ += socket->readAll();
          if (!buffer_.contains("\r\n\r\n")) return;
          lines_ << buffer_.left(buffer_.indexOf("\r\n"));
          buffer_.clear();
          socket->write(
              "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
              "Connection: close\r\n\r\n[]");
          socket->disconnectFromHost();
        });
      }
    });
    return server_.listen(QHostAddress::LocalHost);
  }
  QString url() const { return QStringLiteral("http://127.0.0.1:%1").arg(server_.serverPort()); }
  const QByteArrayList& requestLines() const { return lines_; }

 private:
  QTcpServer server_;
  QByteArray buffer_;
  QByteArrayList lines_;
};

}  // namespace

class HubProxyTest : public QObject {
  Q_OBJECT

 private slots:
  void theHubIsAskedThroughTheSystemsProxy() {
    RecordingProxy proxy;
    QVERIFY(proxy.start());
    const QByteArray saved_proxy = qgetenv("http_proxy");
    const QByteArray saved_no_proxy = qgetenv("no_proxy");
    qputenv("http_proxy", proxy.url().toUtf8());
    qunsetenv("no_proxy");

    // A Hub that is not listening: only the proxy can answer.
    QTemporaryDir cache;
    quire::hub::HubSettings settings;
    settings.endpoint = "http://hub.example.invalid";
    settings.cache_dir = cache.path().toStdString();
    quire::hub::HubClient client(settings);
    client.setRetryPolicy(hub_test::quick_retries());
    std::optional<std::vector<quire::hub::ModelSummary>> found;
    QString error = QStringLiteral("(no answer)");
    quire::hub::SearchQuery query;
    query.search = QStringLiteral("llama");
    client.search(query, [&](std::optional<std::vector<quire::hub::ModelSummary>> models,
                             const QString& why) {
      found = std::move(models);
      error = why;
    });
    QTRY_VERIFY_WITH_TIMEOUT(found.has_value() || error != QStringLiteral("(no answer)"), 10'000);

    qputenv("http_proxy", saved_proxy);
    if (!saved_no_proxy.isEmpty()) qputenv("no_proxy", saved_no_proxy);
    QVERIFY2(found.has_value(), qPrintable(error));
    QVERIFY(found->empty());
    QCOMPARE(proxy.requestLines().size(), 1);
    QVERIFY2(proxy.requestLines()[0].startsWith(
                 "GET http://hub.example.invalid/api/models?search=llama"),
             proxy.requestLines()[0].constData());
  }
};

QUIRE_TEST(HubProxyTest)
#include "test_hub_proxy.moc"
