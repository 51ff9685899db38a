#include "mcp_test_support.h"

#include <QFile>
#include <QRegularExpression>
#include <QTest>

namespace quire::tools::test {
namespace {

const QString kReferenceDir = QStringLiteral(QUIRE_REFERENCE_DIR);

}  // namespace

QString missing_node() {
  if (QStringLiteral(QUIRE_NODE).isEmpty()) {
    return QStringLiteral("Node.js was not found at configure time; the MCP tests need it");
  }
  if (!QFile::exists(kReferenceDir +
                     QStringLiteral("/node_modules/@modelcontextprotocol/sdk/package.json"))) {
    return QStringLiteral(
        "@modelcontextprotocol/sdk is not installed: npm ci --prefix tests/reference");
  }
  return {};
}

ToolServerConfig stdio_server(const QString& name, const QStringList& extra) {
  ToolServerConfig config;
  config.name = name;
  config.command = QStringLiteral(QUIRE_NODE);
  config.arguments = QStringList{kReferenceDir + QStringLiteral("/mcp_test_server.mjs"),
                                 QStringLiteral("--stdio")} +
                     extra;
  config.working_directory = kReferenceDir;
  config.connect_timeout_ms = 30000;
  config.call_timeout_ms = 30000;
  return config;
}

ToolServerConfig garbage_server(const QString& name, const QString& mode) {
  ToolServerConfig config;
  config.name = name;
  config.command = QStringLiteral(QUIRE_NODE);
  config.arguments = QStringList{kReferenceDir + QStringLiteral("/mcp_garbage_server.mjs"), mode};
  config.working_directory = kReferenceDir;
  config.connect_timeout_ms = 20000;
  config.call_timeout_ms = 20000;
  return config;
}

HttpServer::~HttpServer() {
  if (process_ && process_->state() != QProcess::NotRunning) {
    process_->kill();
    process_->waitForFinished(5000);
  }
}

bool HttpServer::start(QString* error, const QStringList& extra) {
  process_ = std::make_unique<QProcess>();
  process_->setWorkingDirectory(kReferenceDir);
  process_->start(QStringLiteral(QUIRE_NODE),
                  QStringList{kReferenceDir + QStringLiteral("/mcp_test_server.mjs"),
                              QStringLiteral("--http"), QStringLiteral("0")} +
                      extra);
  if (!process_->waitForStarted(10000)) {
    *error = QStringLiteral("node did not start: ") + process_->errorString();
    return false;
  }
  static const QRegularExpression listening(QStringLiteral("listening (\\d+)"));
  const bool up = QTest::qWaitFor(
      [&] {
        log_ += QString::fromUtf8(process_->readAllStandardError());
        const QRegularExpressionMatch match = listening.match(log_);
        if (match.hasMatch()) port_ = match.captured(1).toInt();
        return port_ != 0 || process_->state() == QProcess::NotRunning;
      },
      30000);
  if (!up || port_ == 0) {
    *error = QStringLiteral("the HTTP test server did not come up: ") + log_;
    return false;
  }
  return true;
}

ToolServerConfig HttpServer::config(const QString& name) const {
  ToolServerConfig config;
  config.name = name;
  config.transport = ToolTransport::Http;
  config.url = QUrl(QStringLiteral("http://127.0.0.1:%1/mcp").arg(port_));
  config.headers.insert(QStringLiteral("Authorization"), QStringLiteral("Bearer test-token"));
  config.connect_timeout_ms = 30000;
  config.call_timeout_ms = 30000;
  return config;
}

QString HttpServer::log() {
  if (process_) log_ += QString::fromUtf8(process_->readAllStandardError());
  return log_;
}

bool wait_ready(McpClient& client, int timeout_ms) {
  (void)QTest::qWaitFor([&] { return client.state() != McpClient::State::Connecting; }, timeout_ms);
  if (client.state() != McpClient::State::Ready) {
    qWarning("%s is %s: %s", qPrintable(client.name()), qPrintable(to_string(client.state())),
             qPrintable(client.errorString()));
  }
  return client.state() == McpClient::State::Ready;
}

bool wait_finished(ToolCall* call, int timeout_ms) {
  return QTest::qWaitFor([&] { return call->isFinished(); }, timeout_ms);
}

const QStringList kSdkTools = {
    QStringLiteral("echo"),   QStringLiteral("add"),      QStringLiteral("sleep"),
    QStringLiteral("stats"),  QStringLiteral("fail"),     QStringLiteral("throw"),
    QStringLiteral("big"),    QStringLiteral("media"),    QStringLiteral("crash"),
    QStringLiteral("stderr"), QStringLiteral("add_tool"), QStringLiteral("end_session")};

}  // namespace quire::tools::test
