// The HTTP server's connections: many clients that connect at once all get
// in and are all answered (with cpp-httplib's queue of 5 the kernel dropped
// the rest of a burst: their clients waited for retries a second or more
// later, and one to three of 64 had no answer in 20 seconds); and a client
// that leaves while it waits for a whole reply is noticed, its job stopped.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <QTest>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "client_connection.h"
#include "quire/server/openai_server.h"
#include "served_model.h"
#include "test_main.h"

using namespace quire;

namespace {

constexpr int kClients = 64;

class Connection {
 public:
  explicit Connection(int port) : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    // Non-blocking, so that every connection is asked for before any is
    // waited on, as a burst of clients does.
    if (fd_ >= 0 &&
        ::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 &&
        errno != EINPROGRESS) {
      error_ = std::strerror(errno);
    }
  }
  ~Connection() {
    if (fd_ >= 0) ::close(fd_);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  int fd() const { return fd_; }
  const std::string& error() const { return error_; }

  // True once the handshake is done: the connection waits in the server's
  // queue, or has been accepted.
  bool established(std::chrono::milliseconds wait) {
    pollfd entry{fd_, POLLOUT, 0};
    if (::poll(&entry, 1, static_cast<int>(wait.count())) != 1) return false;
    int status = 0;
    socklen_t size = sizeof status;
    ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &status, &size);
    if (status != 0) error_ = std::strerror(status);
    return status == 0;
  }

  bool send_all(const std::string& text) {
    std::size_t sent = 0;
    while (sent < text.size()) {
      const ssize_t n = ::send(fd_, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
      if (n < 0) {
        error_ = std::strerror(errno);
        return false;
      }
      sent += static_cast<std::size_t>(n);
    }
    return true;
  }

  // Everything until the server closes the connection; a reset or a silence
  // longer than `wait` is kept in error().
  std::string read_all(std::chrono::milliseconds wait) {
    std::string text;
    char buffer[4096];
    while (true) {
      pollfd entry{fd_, POLLIN, 0};
      if (::poll(&entry, 1, static_cast<int>(wait.count())) != 1) {
        error_ = "no answer";
        return text;
      }
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n == 0) return text;
      if (n < 0) {
        error_ = std::strerror(errno);
        return text;
      }
      text.append(buffer, static_cast<std::size_t>(n));
    }
  }

 private:
  int fd_;
  std::string error_;
};

// The address of a socket's end, as text and port.
std::pair<std::string, int> local_end(int fd) {
  sockaddr_in address{};
  socklen_t size = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
  char host[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &address.sin_addr, host, sizeof host);
  return {host, ntohs(address.sin_port)};
}

// The server's statistics (GET /v1/quire/stats) on a connection of their own.
nlohmann::json server_stats(int port) {
  Connection connection(port);
  if (!connection.established(std::chrono::seconds(5)) ||
      !connection.send_all("GET /v1/quire/stats HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                           "Connection: close\r\n\r\n")) {
    return nullptr;
  }
  const std::string reply = connection.read_all(std::chrono::seconds(20));
  const std::size_t body = reply.find("\r\n\r\n");
  return body == std::string::npos ? nullptr : nlohmann::json::parse(reply.substr(body + 4));
}

}  // namespace

class TestServerConnections : public QObject {
  Q_OBJECT

 private slots:
  void burstOfConnectionsIsServed() {
    const test::Model model(7);
    test::Served served(model, 4);
    server::ServerOptions options;
    options.host = "127.0.0.1";
    options.port = 0;
    options.threads = kClients;
    server::OpenAiServer http(options, {"burst", 256, 512}, engine::PromptFormatId::Plain,
                              *model.tokenizer, served.host);
    const int port = http.bind();

    // Bound and listening, but accepting nothing yet: every connection must
    // find room in the queue. One that does not is dropped by the kernel and
    // stays unanswered here, however long the wait (its retries are dropped
    // too); the wait only bounds a failure.
    std::vector<std::unique_ptr<Connection>> connections;
    for (int i = 0; i < kClients; ++i) {
      connections.push_back(std::make_unique<Connection>(port));
      QVERIFY2(connections.back()->error().empty(), connections.back()->error().c_str());
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    int established = 0;
    for (const auto& connection : connections) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (connection->established(std::max(left, std::chrono::milliseconds(0)))) ++established;
    }
    QCOMPARE(established, kClients);

    // Every client asks before any reads, then all are answered.
    for (const auto& connection : connections) {
      QVERIFY2(connection->send_all("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                    "Connection: close\r\n\r\n"),
               connection->error().c_str());
    }
    std::thread serving([&http] { http.run(); });
    int answered = 0;
    std::string failures;
    for (const auto& connection : connections) {
      const std::string reply = connection->read_all(std::chrono::seconds(20));
      if (reply.starts_with("HTTP/1.1 200") &&
          reply.ends_with(R"({"model":"burst","status":"ok"})")) {
        ++answered;
      } else if (failures.empty()) {
        failures = "first failure: " + connection->error() + " " + reply.substr(0, 200);
      }
    }
    http.stop();
    serving.join();
    QVERIFY2(answered == kClients, (std::to_string(answered) + " answered; " + failures).c_str());
  }

  // The probe finds a connection by its two addresses among the process's
  // sockets and says when its client closes it, or resets it.
  void theProbeSeesTheClientLeave_data() {
    QTest::addColumn<bool>("reset");
    QTest::newRow("closed") << false;
    QTest::newRow("reset") << true;
  }
  void theProbeSeesTheClientLeave() {
    QFETCH(bool, reset);
    const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    QCOMPARE(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    QCOMPARE(::listen(listener, 4), 0);
    auto client = std::make_unique<Connection>(local_end(listener).second);
    QVERIFY(client->established(std::chrono::seconds(5)));
    const int served = ::accept(listener, nullptr, nullptr);
    QVERIFY(served >= 0);
    const auto [server_host, server_port] = local_end(served);
    const auto [client_host, client_port] = local_end(client->fd());

    server::detail::ClientConnection probe(server_host, server_port, client_host, client_port);
    QCOMPARE(probe.find_socket(), served);
    QVERIFY(!probe.closed());
    QVERIFY(client->send_all("more"));  // unread data is no sign of leaving
    QVERIFY(!probe.closed());
    // The ends swapped name the client's own socket's view: not the server's.
    QCOMPARE(server::detail::ClientConnection(client_host, client_port, server_host, server_port)
                 .find_socket(),
             client->fd());
    QCOMPARE(
        server::detail::ClientConnection(server_host, server_port, client_host, 1).find_socket(),
        -1);

    if (reset) {
      const linger abort_at_close{1, 0};
      ::setsockopt(client->fd(), SOL_SOCKET, SO_LINGER, &abort_at_close, sizeof abort_at_close);
    }
    client.reset();
    QTRY_VERIFY(probe.closed());
    ::close(served);
    ::close(listener);
  }

  // A whole (non-streamed) reply of 4,000 tokens whose client leaves once
  // its job runs: the job stops within a few steps and its pages go back,
  // as a stream's do when its client leaves.
  void aClientLeavingAWholeReplyStopsItsJob() {
    const test::Model model(7);
    test::Served served(model, 2, 300);
    server::ServerOptions options;
    options.host = "127.0.0.1";
    options.port = 0;
    server::OpenAiServer http(options, {"left", 4800, 512}, engine::PromptFormatId::Plain,
                              *model.tokenizer, served.host);
    const int port = http.bind();
    std::thread serving([&http] { http.run(); });
    // Stops the server however the test ends.
    struct Stop {
      server::OpenAiServer& http;
      std::thread& serving;
      ~Stop() {
        http.stop();
        serving.join();
      }
    } stop{http, serving};
    auto client = std::make_unique<Connection>(port);
    QVERIFY(client->established(std::chrono::seconds(5)));
    // End-of-text is never chosen, so only the client's leaving ends it early.
    nlohmann::json bias = nlohmann::json::object();
    for (const std::int32_t eos : model.tokenizer->eos())
      bias[std::to_string(eos)] = -100;
    const std::string body = nlohmann::json{
        {"model", "left"},
        {"prompt", "Once upon a time"},
        {"max_tokens", 4000},
        {"temperature", 0},
        {"logit_bias", bias}}.dump();
    QVERIFY(
        client->send_all("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         "Content-Type: application/json\r\nContent-Length: " +
                         std::to_string(body.size()) + "\r\n\r\n" + body));
    // Running, and its reply not yet sent.
    QTRY_COMPARE_WITH_TIMEOUT(server_stats(port).value("running", 0), 1, 20000);
    pollfd answer{client->fd(), POLLIN, 0};
    QCOMPARE(::poll(&answer, 1, 0), 0);
    client.reset();
    QTRY_COMPARE_WITH_TIMEOUT(server_stats(port).value("running", -1), 0, 20000);
    const nlohmann::json stats = server_stats(port);
    QVERIFY2(stats["sampled_tokens"].get<int>() < 3000, stats.dump().c_str());
    QCOMPARE(stats["cache"]["sequences"].get<int>(), 0);
    QVERIFY(served.runtime.cache().check_invariants().empty());
  }

  // More choices than the server ever holds: the 400 says what raises the
  // limit where there is something to raise it with (quire-cli serve's
  // options), and nothing of another program's options elsewhere (the
  // desktop application's server).
  void tooManyChoicesSayWhatRaisesTheLimit_data() {
    QTest::addColumn<QString>("advice");
    QTest::addColumn<QString>("ending");
    QTest::newRow("command line") << QStringLiteral("raise --jobs")
                                  << QStringLiteral("at most 2 replies at once (raise --jobs).");
    QTest::newRow("no advice") << QString() << QStringLiteral("at most 2 replies at once.");
  }
  void tooManyChoicesSayWhatRaisesTheLimit() {
    QFETCH(QString, advice);
    QFETCH(QString, ending);
    const test::Model model(7);
    test::Served served(model, 2);
    server::ServerOptions options;
    options.host = "127.0.0.1";
    options.port = 0;
    options.capacity_advice = advice.toStdString();
    server::OpenAiServer http(options, {"choices", 256, 512}, engine::PromptFormatId::Plain,
                              *model.tokenizer, served.host);
    const int port = http.bind();
    std::thread serving([&http] { http.run(); });
    Connection client(port);
    QVERIFY(client.established(std::chrono::seconds(5)));
    const std::string body = R"({"model":"choices","prompt":"Hi","max_tokens":2,"n":3})";
    QVERIFY2(client.send_all("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                             "Content-Type: application/json\r\nConnection: close\r\n"
                             "Content-Length: " +
                             std::to_string(body.size()) + "\r\n\r\n" + body),
             client.error().c_str());
    const std::string reply = client.read_all(std::chrono::seconds(20));
    http.stop();
    serving.join();
    QVERIFY2(reply.starts_with("HTTP/1.1 400"), reply.c_str());
    const std::string expected =
        "\"n is 3, but this server runs and queues " + ending.toStdString() + "\"";
    QVERIFY2(reply.find(expected) != std::string::npos, reply.c_str());
  }
};

QUIRE_TEST(TestServerConnections)
#include "test_server_connections.moc"
