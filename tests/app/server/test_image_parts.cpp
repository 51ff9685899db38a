// Image content parts on /v1/chat/completions: what a user message's
// image_url parts become (in order among its text), the exact error body of
// each refusal, and the answer of a model that cannot see images.
// The suite is declared in test_image_parts.h: moc cannot read this file's
// raw strings.

#include "test_image_parts.h"

#include <QTest>
#include <string>

#include "quire/engine/generator/image_input.h"
#include "quire/server/api_error.h"
#include "quire/server/openai_request.h"
#include "quire/server/vision_support.h"
#include "test_main.h"

using namespace quire::server;

Q_DECLARE_METATYPE(std::string)

namespace {

// The first bytes of each format (made with Python's base64 module): the
// parser checks signatures and keeps the bytes; decoding comes later.
const std::string kPng = "iVBORw0KGgoAAAANSUhEUg==";   // 16 bytes
const std::string kJpeg = "/9j/4AAQSkZJRgA=";          // 11 bytes
const std::string kWebp = "UklGRhoAAABXRUJQVlA4IA==";  // 16 bytes
const std::string kGif = "R0lGODlhAQABAA==";           // 10 bytes

std::string image_part(const std::string& url) {
  return R"({"type": "image_url", "image_url": {"url": ")" + url + R"("}})";
}

// A request whose one user message holds `parts` (JSON text of a list's items).
std::string user_parts(const std::string& parts) {
  return R"({"messages": [{"role": "user", "content": [)" + parts + "]}]}";
}

std::string error_body_of(const std::string& body) {
  try {
    parse_chat_completion_request(body);
  } catch (const ApiException& error) {
    return std::to_string(error.error().status) + " " + error_body(error.error());
  }
  return "accepted";
}

std::vector<std::uint8_t> bytes_of(std::string_view text) {
  return {text.begin(), text.end()};
}

}  // namespace

void TestImageParts::partsKeepTheirOrder() {
  const ChatCompletionRequest request = parse_chat_completion_request(
      R"({"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": [)"
      R"({"type": "text", "text": "Look:"}, )" +
      image_part("data:image/png;base64," + kPng) + R"(, {"type": "text", "text": "and"}, )" +
      R"({"type": "image_url", "image_url": {"url": "data:image/jpg;base64,)" + kJpeg +
      R"(", "detail": "low"}}, {"type": "image_url", "image_url": "data:IMAGE/WEBP;base64,)" +
      kWebp + R"("}]}]})");
  QCOMPARE(request.messages.size(), std::size_t{2});
  const ChatMessage& user = request.messages[1];
  QCOMPARE(user.content, std::string("Look:\nand"));
  QVERIFY(user.has_images());
  QVERIFY(!request.messages[0].has_images());
  QCOMPARE(user.parts.size(), std::size_t{5});
  QCOMPARE(user.parts[0], (ContentPart{"Look:", std::nullopt}));
  QCOMPARE(user.parts[2], (ContentPart{"and", std::nullopt}));
  const MessageImage png{"image/png",
                         bytes_of(std::string_view("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16)), "auto",
                         "messages[1].content[1]"};
  QCOMPARE(png.bytes.size(), std::size_t{16});
  QCOMPARE(user.parts[1], (ContentPart{"", png}));
  // image/jpg is taken as image/jpeg; the bare string form has detail "auto".
  const MessageImage jpeg{"image/jpeg",
                          bytes_of(std::string_view("\xFF\xD8\xFF\xE0\0\x10JFIF\0", 11)), "low",
                          "messages[1].content[3]"};
  QCOMPARE(user.parts[3], (ContentPart{"", jpeg}));
  QCOMPARE(user.parts[4].image->mime_type, std::string("image/webp"));
  QCOMPARE(user.parts[4].image->detail, std::string("auto"));
  QCOMPARE(user.parts[4].image->where, std::string("messages[1].content[4]"));
  QCOMPARE(user.parts[4].image->bytes.size(), std::size_t{16});
  // The turns of a request without tools keep the text.
  QCOMPARE(request.turns.user, std::string("Look:\nand"));
}

void TestImageParts::signatureWinsOverTheMediaType() {
  const ChatCompletionRequest request =
      parse_chat_completion_request(user_parts(image_part("data:image/png;base64," + kGif)));
  QCOMPARE(request.messages[0].parts[0].image->mime_type, std::string("image/gif"));
}

void TestImageParts::imageAloneHasNoText() {
  const ChatCompletionRequest request =
      parse_chat_completion_request(user_parts(image_part("data:image/gif;base64," + kGif)));
  QCOMPARE(request.messages[0].content, std::string());
  QCOMPARE(request.messages[0].parts.size(), std::size_t{1});
}

void TestImageParts::textPartsAloneKeepNoParts() {
  const ChatCompletionRequest request = parse_chat_completion_request(
      user_parts(R"({"type": "text", "text": "a"}, {"type": "text", "text": "b"})"));
  QCOMPARE(request.messages[0].content, std::string("a\nb"));
  QVERIFY(request.messages[0].parts.empty());
}

void TestImageParts::refusals_data() {
  QTest::addColumn<std::string>("body");
  QTest::addColumn<std::string>("expected");
  QTest::newRow("bad character")
      << user_parts(image_part("data:image/png;base64,iVBORw0K*goAAAANSUhEUg=="))
      << std::string(
             R"(400 {"error":{"message":"messages[0].content[0].image_url.url does not hold valid base64: '*' at offset 8 is not in the base64 alphabet.","type":"invalid_request_error","param":"messages","code":null}})");
  QTest::newRow("url-safe alphabet")
      << user_parts(R"({"type": "text", "text": "x"}, )" +
                    image_part("data:image/jpeg;base64,_9j_4AAQSkZJRgA="))
      << std::string(
             R"(400 {"error":{"message":"messages[0].content[1].image_url.url does not hold valid base64: '_' at offset 0 belongs to the URL-safe alphabet; use the standard one ('+' and '/').","type":"invalid_request_error","param":"messages","code":null}})");
  QTest::newRow("line break")
      << user_parts(image_part("data:image/png;base64,iVBORw0K\\nGgoAAAANSUhEUg=="))
      << std::string(
             R"(400 {"error":{"message":"messages[0].content[0].image_url.url does not hold valid base64: whitespace at offset 8 (send it without line breaks).","type":"invalid_request_error","param":"messages","code":null}})");
  QTest::newRow("missing padding")
      << user_parts(image_part("data:image/png;base64,iVBORw0KGgoAAAANSUhEUg"))
      << std::string(
             R"(400 {"error":{"message":"messages[0].content[0].image_url.url does not hold valid base64: its length, 22 characters, is not a multiple of four (pad it with '=').","type":"invalid_request_error","param":"messages","code":null}})");
  QTest::newRow("padding inside")
      << user_parts(image_part("data:image/png;base64,iVBO=w0KGgoAAAANSUhEUg=="))
      << std::string(
             R"(400 {"error":{"message":"messages[0].content[0].image_url.url does not hold valid base64: '=' at offset 4 comes before the end (padding goes only at the end, at most two).","type":"invalid_request_error","param":"messages","code":null}})");
  QTest::newRow("padding bits set")
      << user_parts(image_part("data:image/png;base64,iVBORw0KGgoAAAANSUhEUh=="))
      << std::string(
             R"(400 {"error":{"message":"messages[0].content[0].image_url.url does not hold valid base64: the character before the padding has bits set that no byte holds (the data was cut or altered).","type":"invalid_request_error","param":"messages","code":null}})");
  QTest::newRow("unknown media type")
      << user_parts(image_part("data:image/bmp;base64,Qk0="))
      << std::string(
             R"(400 {"error":{"message":"messages[0].content[0].image_url.url has the media type \"image/bmp\": this server takes image/png, image/jpeg, image/webp and image/gif.","type":"invalid_request_error","param":"messages","code":null}})");
  QTest::newRow("long media type")
      << user_parts(image_part("data:image/" + std::string(100, 'x') + ";base64," + kPng))
      << std::string(
             R"(400 {"error":{"message":"messages[0].content[0].image_url.url has the media type \"image/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...\": this server takes image/png, image/jpeg, image/webp and image/gif.","type":"invalid_request_error","param":"messages","code":null}})");
  QTest::newRow("no media type")
      << user_parts(image_part("data:;base64," + kPng))
      << std::string(
             R"(400 {"error":{"message":"messages[0].content[0].image_url.url names no media type: this server takes image/png, image/jpeg, image/webp and image/gif.","type":"invalid_request_error","param":"messages","code":null}})");
  QTest::newRow("not base64")
      << user_parts(image_part("data:image/png,rawbytes"))
      << std::string(
             R"(400 {"error":{"message":"messages[0].content[0].image_url.url is a data: URL whose data is not marked base64 (\";base64,\"). Send the image inline as data:image/png;base64,... (or jpeg, webp, gif).","type":"invalid_request_error","param":"messages","code":null}})");
  QTest::newRow("no data")
      << user_parts(image_part("data:image/png;base64,"))
      << std::string(
             R"(400 {"error":{"message":"messages[0].content[0].image_url.url holds no image data.","type":"invalid_request_error","param":"messages","code":null}})");
  QTest::newRow("not an image")
      << user_parts(image_part("data:image/png;base64,aGVsbG8gd29ybGQh"))
      << std::string(
             R"(400 {"error":{"message":"messages[0].content[0].image_url.url does not hold a PNG, JPEG, WebP or GIF file: its data begins with none of their signatures.","type":"invalid_request_error","param":"messages","code":null}})");
  QTest::newRow("https url")
      << user_parts(image_part("https://example.com/cat.png"))
      << std::string(
             R"(400 {"error":{"message":"messages[0].content[0].image_url.url is an https URL: this server does not fetch images from the network. Send the image inline as data:image/png;base64,... (or jpeg, webp, gif).","type":"invalid_request_error","param":"messages","code":null}})");
  QTest::newRow("http url, bare string")
      << user_parts(R"({"type": "image_url", "image_url": "HTTP://example.com/cat.png"})")
      << std::string(
             R"(400 {"error":{"message":"messages[0].content[0].image_url is an http URL: this server does not fetch images from the network. Send the image inline as data:image/png;base64,... (or jpeg, webp, gif).","type":"invalid_request_error","param":"messages","code":null}})");
  QTest::newRow("file url")
      << user_parts(image_part("file:///home/me/cat.png"))
      << std::string(
             R"(400 {"error":{"message":"messages[0].content[0].image_url.url must be a data: URL holding the image, not a file: URL. Send the image inline as data:image/png;base64,... (or jpeg, webp, gif).","type":"invalid_request_error","param":"messages","code":null}})");
  QTest::newRow("no url")
      << user_parts(R"({"type": "image_url", "image_url": {"detail": "low"}})")
      << std::string(
             R"(400 {"error":{"message":"messages[0].content[0].image_url.url must be a string, the image as a data: URL.","type":"invalid_request_error","param":"messages","code":null}})");
  QTest::newRow("no image_url")
      << user_parts(R"({"type": "image_url"})")
      << std::string(
             R"(400 {"error":{"message":"messages[0].content[0].image_url is missing: give the image as {\"url\": \"data:image/png;base64,...\"}.","type":"invalid_request_error","param":"messages","code":null}})");
  QTest::newRow("image_url number")
      << user_parts(R"({"type": "image_url", "image_url": 3})")
      << std::string(
             R"(400 {"error":{"message":"messages[0].content[0].image_url must be an object with the image's \"url\" (or the URL as a string), not an integer.","type":"invalid_request_error","param":"messages","code":null}})");
  QTest::newRow("bad detail")
      << user_parts(R"({"type": "image_url", "image_url": {"url": "data:image/png;base64,)" + kPng +
                    R"(", "detail": "ultra"}})")
      << std::string(
             R"(400 {"error":{"message":"messages[0].content[0].image_url.detail must be \"auto\", \"low\" or \"high\"; it is \"ultra\".","type":"invalid_request_error","param":"messages","code":null}})");
  QTest::newRow("image in a system message")
      << std::string(R"({"messages": [{"role": "system", "content": [)" +
                     image_part("data:image/png;base64," + kPng) +
                     R"(]}, {"role": "user", "content": "Hi"}]})")
      << std::string(
             R"(400 {"error":{"message":"messages[0].content[0] is an image in a system message; images go in user messages only.","type":"invalid_request_error","param":"messages","code":null}})");
  QTest::newRow("image in a developer message")
      << std::string(R"({"messages": [{"role": "developer", "content": [)" +
                     image_part("data:image/png;base64," + kPng) +
                     R"(]}, {"role": "user", "content": "Hi"}]})")
      << std::string(
             R"(400 {"error":{"message":"messages[0].content[0] is an image in a developer message; images go in user messages only.","type":"invalid_request_error","param":"messages","code":null}})");
  QTest::newRow("image in an assistant message")
      << std::string(
             R"({"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": [)" +
             image_part("data:image/png;base64," + kPng) +
             R"(]}, {"role": "user", "content": "Hi"}]})")
      << std::string(
             R"(400 {"error":{"message":"messages[1].content[0] is an image in an assistant message; images go in user messages only.","type":"invalid_request_error","param":"messages","code":null}})");
  QTest::newRow("image in a tool message")
      << std::string(R"({"messages": [{"role": "tool", "tool_call_id": "c", "content": [)" +
                     image_part("data:image/png;base64," + kPng) + R"(]}]})")
      << std::string(
             R"(400 {"error":{"message":"messages[0].content[0] is an image in a tool message; images go in user messages only.","type":"invalid_request_error","param":"messages","code":null}})");
  QTest::newRow("audio part")
      << user_parts(R"({"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}})")
      << std::string(
             R"(400 {"error":{"message":"messages[0].content[0] is of type \"input_audio\": this server takes \"text\" and \"image_url\" parts only.","type":"invalid_request_error","param":"messages","code":null}})");
  QTest::newRow("file part")
      << user_parts(R"({"type": "file", "file": {"file_id": "f"}})")
      << std::string(
             R"(400 {"error":{"message":"messages[0].content[0] is of type \"file\": this server takes \"text\" and \"image_url\" parts only.","type":"invalid_request_error","param":"messages","code":null}})");
}

void TestImageParts::refusals() {
  QFETCH(std::string, body);
  QFETCH(std::string, expected);
  QCOMPARE(error_body_of(body), expected);
}

// The size is judged from the base64 text's length, before anything is
// decoded or allocated.
void TestImageParts::tooLargeAnImage() {
  const std::size_t characters = (kMaxImageBytes + 1) / 3 * 4;
  QCOMPARE(characters / 4 * 3, kMaxImageBytes + 1);
  const std::string body =
      user_parts(image_part("data:image/png;base64," + std::string(characters, 'A')));
  QCOMPARE(
      error_body_of(body),
      std::string(
          R"(400 {"error":{"message":"messages[0].content[0].image_url.url holds an image of 20971521 bytes; this server takes images of at most 20 MiB (20971520 bytes). Send it smaller.","type":"invalid_request_error","param":"messages","code":null}})"));
}

void TestImageParts::modelWithoutVision() {
  const ChatCompletionRequest request = parse_chat_completion_request(
      R"({"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}, )"
      R"({"role": "user", "content": [{"type": "text", "text": "What is this?"}, )" +
      image_part("data:image/png;base64," + kPng) + "]}]}");
  const ServedModel model{"demo", 256, 512};
  QVERIFY(!model_sees_images(model));
  try {
    check_images_seen(request, model);
    QFAIL("an image reached a model that cannot see it");
  } catch (const ApiException& error) {
    QCOMPARE(
        std::to_string(error.error().status) + " " + error_body(error.error()),
        std::string(
            R"(400 {"error":{"message":"The model 'demo' cannot see images, and messages[2].content[1] is one. Send the request without image_url parts.","type":"invalid_request_error","param":"messages","code":null}})"));
  }
  // Text alone passes.
  check_images_seen(
      parse_chat_completion_request(R"({"messages": [{"role": "user", "content": "Hi"}]})"), model);
}

// A vision tower is not enough without a way to prepare its images (a
// family whose images the engine does not yet place in a prompt).
void TestImageParts::generatorSwitchDecides() {
  ServedModel model{"gemma", 256, 512};
  model.vision_tower = true;
  QVERIFY(!model_sees_images(model));
  model.prepare_image =
      [](const MessageImage&) -> std::shared_ptr<const quire::engine::PreparedImage> {
    return nullptr;
  };
  QCOMPARE(model_sees_images(model), quire::engine::kGeneratorTakesImages);
}

QUIRE_TEST(TestImageParts)
