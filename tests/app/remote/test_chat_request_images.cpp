// Images in the body sent to a remote engine: a message that holds them goes
// as OpenAI's content parts in order, each data: URL unchanged; a message of
// text alone stays a string.

#include <QTest>
#include <nlohmann/json.hpp>

#include "quire/remote/chat_request.h"
#include "test_main.h"

using nlohmann::json;
using quire::remote::chat_request_body;
using quire::remote::ChatMessage;
using quire::remote::ChatSampling;

class ChatRequestImagesTest : public QObject {
  Q_OBJECT

 private slots:
  void imagePartsGoInOrder() {
    ChatMessage user("user", "Compare\nwith this");
    user.parts = {{"Compare", "", ""},
                  {"", "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==", "low"},
                  {"with this", "", ""},
                  {"", "data:image/gif;base64,R0lGODlhAQABAA==", ""}};
    const json body = json::parse(chat_request_body(
        "m", {{"system", "Be brief."}, {"user", "Hi"}, {"assistant", "Hello"}, user}, {}, 16));
    const json& messages = body.at("messages");
    QCOMPARE(messages.size(), std::size_t{4});
    QCOMPARE(messages[1].at("content").dump(), std::string(R"("Hi")"));
    const json expected = json::parse(R"([
      {"type": "text", "text": "Compare"},
      {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==", "detail": "low"}},
      {"type": "text", "text": "with this"},
      {"type": "image_url", "image_url": {"url": "data:image/gif;base64,R0lGODlhAQABAA=="}}
    ])");
    QCOMPARE(messages[3].at("content").dump(), expected.dump());
    QCOMPARE(messages[3].at("role").dump(), std::string(R"("user")"));
  }
};

QUIRE_TEST(ChatRequestImagesTest)
#include "test_chat_request_images.moc"
