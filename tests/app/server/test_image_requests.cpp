// Image parts through the HTTP server: a request whose body is beyond the
// server's limit is refused before it is read as JSON, naming the limit, and
// a model that cannot see images answers an image with OpenAI's error shape.

#include <httplib.h>

#include <QTest>
#include <string>
#include <thread>

#include "quire/server/openai_server.h"
#include "served_model.h"
#include "test_main.h"

using namespace quire;

namespace {

std::string image_request(const std::string& base64) {
  return R"({"model": "eyes", "messages": [{"role": "user", "content": [)"
         R"({"type": "text", "text": "What is this?"}, )"
         R"({"type": "image_url", "image_url": {"url": "data:image/png;base64,)" +
         base64 + R"("}}]}], "max_tokens": 2})";
}

// The status and body of one POST to a served random model.
std::pair<int, std::string> post(const server::ServerOptions& settings, const std::string& path,
                                 const std::string& body) {
  const test::Model model(7);
  test::Served served(model, 2);
  server::ServerOptions options = settings;
  options.host = "127.0.0.1";
  options.port = 0;
  server::OpenAiServer http(options, {"eyes", 256, 512}, engine::PromptFormatId::Plain,
                            *model.tokenizer, served.host);
  const int port = http.bind();
  std::thread serving([&http] { http.run(); });
  httplib::Client client("127.0.0.1", port);
  const httplib::Result result = client.Post(path, body, "application/json");
  http.stop();
  serving.join();
  if (!result) return {0, "no answer: " + httplib::to_string(result.error())};
  return {result->status, result->body};
}

}  // namespace

class TestImageRequests : public QObject {
  Q_OBJECT

 private slots:
  void modelWithoutVisionSaysSo() {
    const auto [status, body] =
        post({}, "/v1/chat/completions", image_request("iVBORw0KGgoAAAANSUhEUg=="));
    QCOMPARE(status, 400);
    QCOMPARE(
        body,
        std::string(
            R"({"error":{"message":"The model 'eyes' cannot see images, and messages[0].content[1] is one. Send the request without image_url parts.","type":"invalid_request_error","param":"messages","code":null}})"));
  }

  // The body's limit comes before the image's own (20 MiB): an image of 1.5
  // MiB to a server that takes 1 MiB bodies is refused as the body it is.
  void bodyBeyondTheLimit() {
    server::ServerOptions options;
    options.max_body_bytes = std::size_t{1} << 20;
    const std::string image = "iVBORw0KGgoAAAANSUhEUg" + std::string(2 << 20, 'A') + "==";
    const auto [status, body] = post(options, "/v1/chat/completions", image_request(image));
    QCOMPARE(status, 413);
    QCOMPARE(
        body,
        std::string(
            R"({"error":{"message":"The request body is larger than this server takes (1 MiB).","type":"invalid_request_error","param":null,"code":"request_too_large"}})"));
  }
};

QUIRE_TEST(TestImageRequests)
#include "test_image_requests.moc"
