#pragma once

// A local HTTP server that answers as an engine would, for the client's
// tests: each request gets the next queued answer, its body written in pieces
// a few milliseconds apart (as an engine streams), optionally cut off after
// some bytes. It records what it was asked.

#include <QByteArray>
#include <QList>
#include <QObject>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>

namespace quire::test {

struct FakeAnswer {
  int status = 200;
  QByteArray content_type = "text/event-stream";
  QByteArray body;
  int piece = 16;          // bytes written at a time
  int interval_ms = 1;     // between pieces
  int cut_after = -1;      // close the connection after this many body bytes; -1: never
  bool hold_open = false;  // after the body, keep the connection open (a stalled engine)
};

struct FakeRequest {
  QByteArray method;
  QByteArray path;
  QByteArray authorization;
  QByteArray body;
};

class FakeEngine : public QObject {
 public:
  FakeEngine() {
    connect(&server_, &QTcpServer::newConnection, this, &FakeEngine::accept);
    if (!server_.listen(QHostAddress::LocalHost, 0)) qFatal("the fake engine cannot listen");
  }

  QString url() const { return QStringLiteral("http://127.0.0.1:%1").arg(server_.serverPort()); }
  void enqueue(const FakeAnswer& answer) { answers_.append(answer); }
  const QList<FakeRequest>& requests() const { return requests_; }
  // Connections the fake engine has seen closed by the client.
  int clientClosed() const { return client_closed_; }

 private:
  void accept() {
    while (QTcpSocket* socket = server_.nextPendingConnection()) {
      // Small pieces go out at once, as an engine's flushed chunks do.
      socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
      auto* buffer = new QByteArray;
      connect(socket, &QTcpSocket::disconnected, socket, [this, socket, buffer] {
        if (!socket->property("answered_all").toBool()) ++client_closed_;
        delete buffer;
        socket->deleteLater();
      });
      connect(socket, &QTcpSocket::readyRead, socket, [this, socket, buffer] {
        buffer->append(socket->readAll());
        // Bytes that are no HTTP request (a TLS handshake sent to a plain
        // HTTP port): answered with 400 and closed, as an HTTP server does.
        if (!buffer->isEmpty() && !(buffer->at(0) >= 'A' && buffer->at(0) <= 'Z')) {
          socket->setProperty("answered_all", true);
          socket->write("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
          socket->disconnectFromHost();
          return;
        }
        const qsizetype head_end = buffer->indexOf("\r\n\r\n");
        if (head_end < 0 || socket->property("started").toBool()) return;
        const QByteArray head = buffer->left(head_end);
        qsizetype length = 0;
        FakeRequest request;
        const QList<QByteArray> lines = head.split('\n');
        const QList<QByteArray> first = lines.value(0).trimmed().split(' ');
        request.method = first.value(0);
        request.path = first.value(1);
        for (const QByteArray& line : lines.mid(1)) {
          const qsizetype colon = line.indexOf(':');
          const QByteArray name = line.left(colon).trimmed().toLower();
          const QByteArray value = line.mid(colon + 1).trimmed();
          if (name == "content-length") length = value.toLongLong();
          if (name == "authorization") request.authorization = value;
        }
        if (buffer->size() < head_end + 4 + length) return;
        request.body = buffer->mid(head_end + 4, length);
        requests_.append(request);
        socket->setProperty("started", true);
        answer(socket, answers_.isEmpty()
                           ? FakeAnswer{404, "application/json",
                                        R"({"error": {"message": "nothing queued"}})"}
                           : answers_.takeFirst());
      });
    }
  }

  void answer(QTcpSocket* socket, const FakeAnswer& answer) {
    QByteArray head = "HTTP/1.1 " + QByteArray::number(answer.status) +
                      " X\r\nContent-Type: " + answer.content_type + "\r\nConnection: close\r\n";
    // A stream has no length; other bodies say theirs.
    if (answer.content_type != "text/event-stream" && answer.cut_after < 0)
      head += "Content-Length: " + QByteArray::number(answer.body.size()) + "\r\n";
    socket->write(head + "\r\n");
    const QByteArray body =
        answer.cut_after >= 0 ? answer.body.left(answer.cut_after) : answer.body;
    auto* timer = new QTimer(socket);
    auto sent = std::make_shared<qsizetype>(0);
    connect(timer, &QTimer::timeout, socket, [socket, timer, body, sent, answer] {
      if (*sent >= body.size()) {
        timer->stop();
        if (answer.hold_open) return;
        socket->setProperty("answered_all", true);
        socket->disconnectFromHost();
        return;
      }
      socket->write(body.mid(*sent, answer.piece));
      *sent += answer.piece;
    });
    timer->start(answer.interval_ms);
  }

  QTcpServer server_;
  QList<FakeAnswer> answers_;
  QList<FakeRequest> requests_;
  int client_closed_ = 0;
};

}  // namespace quire::test
