// The server's memory of the replies it sent: ids kept only when they decode
// to the reply's text, the replies used longest ago dropped first, and a
// conversation sent back as text finding its earlier turns' pages in the
// cache through the ids the model generated, where the text's own tokens
// would miss them.

#include <httplib.h>

#include <QTest>
#include <algorithm>
#include <nlohmann/json.hpp>
#include <thread>

#include "quire/server/completion_job.h"
#include "quire/server/openai_server.h"
#include "quire/server/reply_memory.h"
#include "served_model.h"
#include "test_main.h"

using namespace quire;
using namespace quire::engine;
using quire::server::ChatCompletionRequest;
using quire::server::ReplyMemory;
using quire::test::Model;
using quire::test::Served;

namespace {

std::vector<std::int32_t> ids_of(std::initializer_list<int> ids) {
  return {ids.begin(), ids.end()};
}

// A greedy reply of exactly `tokens` ids: nothing but the budget ends it.
server::PreparedJob chat_job(const ChatCompletionRequest& request, const Model& model,
                             ReplyMemory* replies) {
  const server::ServedModel served{"small", 4096,
                                   static_cast<int>(model.description->config.vocab_size)};
  server::PreparedJob job =
      server::prepare_chat_job(request, PromptFormatId::ChatML, *model.tokenizer, served, replies);
  job.request.stop_at_eos = false;
  job.request.stop_tokens.clear();
  job.request.stop_strings.clear();
  return job;
}

ChatCompletionRequest chat_request(int reply_tokens) {
  ChatCompletionRequest request;
  request.turns.system = "You are brief.";
  request.turns.user = "Tell me about the sea and the ships on it.";
  request.sampling.temperature = 0.0;
  request.sampling.max_tokens = reply_tokens;
  return request;
}

JobResult run(Served& served, server::PreparedJob job) {
  const std::shared_ptr<server::ReplyChannel> channel = served.host.submit(std::move(job.request));
  if (!channel) throw std::runtime_error("the engine host refused the job");
  std::vector<JobResult> results = channel->wait_results();
  return std::move(results.front());
}

// The reply's text from a streamed chat completion's events.
std::string streamed_text(const std::string& body) {
  std::string text;
  std::size_t at = 0;
  while ((at = body.find("data: ", at)) != std::string::npos) {
    at += 6;
    const std::size_t end = body.find("\n\n", at);
    const std::string data = body.substr(at, end - at);
    if (data == "[DONE]") break;
    const nlohmann::json event = nlohmann::json::parse(data);
    // The usage event that closes the stream has no choices.
    if (event.at("choices").empty()) continue;
    const nlohmann::json& delta = event.at("choices").at(0).at("delta");
    if (delta.contains("content")) text += delta.at("content").get<std::string>();
  }
  return text;
}

bool starts_with(const std::vector<std::int32_t>& ids, const std::vector<std::int32_t>& prefix) {
  return ids.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), ids.begin());
}

}  // namespace

class ReplyMemoryTest : public QObject {
  Q_OBJECT

 private slots:
  void keepsIdsThatDecodeToTheirText() {
    const Model model(52);
    ReplyMemory replies;
    const std::vector<std::int32_t> ids = ids_of({40, 41, 42, 300, 301});
    const std::string text = model.tokenizer->decode(ids);
    replies.remember(text, ids, *model.tokenizer);
    QCOMPARE(replies.recall(text), std::optional(ids));
    QCOMPARE(replies.replies(), std::size_t(1));
    QCOMPARE(replies.tokens(), std::size_t(5));

    // A reply cut short of its ids (at a stop string) is not kept: its text
    // would not stand for these ids.
    const std::string cut = text.substr(0, text.size() - 1);
    replies.remember(cut, ids, *model.tokenizer);
    QCOMPARE(replies.recall(cut), std::nullopt);
    QCOMPARE(replies.replies(), std::size_t(1));
    // Nor an empty reply, nor one without ids.
    replies.remember("", ids, *model.tokenizer);
    replies.remember(text, {}, *model.tokenizer);
    QCOMPARE(replies.replies(), std::size_t(1));
    QCOMPARE(replies.recall(text), std::optional(ids));
  }

  void dropsTheRepliesUsedLongestAgo() {
    const Model model(52);
    ReplyMemory replies(10);
    const auto keep = [&](std::vector<std::int32_t> ids) {
      const std::string text = model.tokenizer->decode(ids);
      replies.remember(text, ids, *model.tokenizer);
      return text;
    };
    const std::string a = keep(ids_of({60, 61, 62, 63}));
    const std::string b = keep(ids_of({70, 71, 72, 73}));
    QVERIFY(replies.recall(a));  // a is now the most recently used
    const std::string c = keep(ids_of({80, 81, 82, 83}));
    QCOMPARE(replies.tokens(), std::size_t(8));
    QVERIFY(replies.recall(a));
    QCOMPARE(replies.recall(b), std::nullopt);
    QVERIFY(replies.recall(c));

    // The same text again takes the newest ids, counted once.
    keep(ids_of({60, 61, 62, 63}));
    QCOMPARE(replies.replies(), std::size_t(2));
    QCOMPARE(replies.tokens(), std::size_t(8));
    // A reply longer than the whole memory is not kept.
    keep(ids_of({90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100}));
    QCOMPARE(replies.replies(), std::size_t(2));
  }

  void resentRepliesFindTheirPages() {
    const Model model(52);
    Served served(model, 4);
    ReplyMemory replies;

    const ChatCompletionRequest first = chat_request(40);
    const server::PreparedJob first_job = chat_job(first, model, &replies);
    const std::vector<std::int32_t> first_prompt = first_job.request.prompt;
    const JobResult reply = run(served, first_job);
    QCOMPARE(reply.tokens.size(), std::size_t(40));
    // What makes the memory matter: the reply's text does not tokenize back
    // into the ids the model generated.
    QVERIFY(model.tokenizer->encode(reply.text, false) != reply.tokens);
    replies.remember(reply.text, reply.tokens, *model.tokenizer);
    QCOMPARE(replies.replies(), std::size_t(1));

    // The next request, as a client sends it: the reply back as text.
    ChatCompletionRequest second = chat_request(8);
    second.turns.history = {{first.turns.user, reply.text}};
    second.turns.user = "And the harbours?";

    std::vector<std::int32_t> generated = first_prompt;
    generated.insert(generated.end(), reply.tokens.begin(), reply.tokens.end());
    // The cache holds every id of the first turn but the reply's last: that
    // one was sampled, and the reply ended before the model read it.
    const auto first_turn_cached = static_cast<std::int64_t>(generated.size()) - 1;

    // Tokenized from its text, the prompt leaves the generated ids part way
    // through the reply, and the cache serves only the ids before that.
    const server::PreparedJob from_text = chat_job(second, model, nullptr);
    QVERIFY(!starts_with(from_text.request.prompt, generated));
    const auto common =
        static_cast<std::int64_t>(std::ranges::mismatch(from_text.request.prompt, generated).in1 -
                                  from_text.request.prompt.begin());
    const JobResult text_turn = run(served, from_text);
    QCOMPARE(text_turn.statistics.cached_tokens, common);
    QVERIFY(common < first_turn_cached);

    // With the memory, the prompt extends the first turn id for id, and the
    // whole first turn comes from the cache.
    const server::PreparedJob remembered = chat_job(second, model, &replies);
    QVERIFY(starts_with(remembered.request.prompt, generated));
    const JobResult remembered_turn = run(served, remembered);
    QCOMPARE(remembered_turn.statistics.cached_tokens, first_turn_cached);
  }

  // Through HTTP, as a client holds a conversation: a streamed reply and a
  // whole one each come back as text in the next request, and each next
  // request finds every id of the turns before it in the cache but the last
  // reply's last (sampled, never read by the model).
  void theServerRemembersWhatItSent() {
    const Model model(52);
    Served served(model, 4);
    server::ServerOptions options;
    options.host = "127.0.0.1";
    options.port = 0;
    server::OpenAiServer http(
        options, {"small", 4096, static_cast<int>(model.description->config.vocab_size)},
        PromptFormatId::ChatML, *model.tokenizer, served.host);
    const int port = http.bind();
    std::thread serving([&http] { http.run(); });
    httplib::Client client("127.0.0.1", port);
    client.set_read_timeout(60);

    nlohmann::json messages = nlohmann::json::array(
        {{{"role", "system"}, {"content", "You are brief."}},
         {{"role", "user"}, {"content", "Tell me about the sea and the ships on it."}}});
    const auto ask = [&](bool stream) {
      const nlohmann::json body = {{"messages", messages},
                                   {"temperature", 0},
                                   {"max_tokens", 40},
                                   {"stream", stream},
                                   {"stream_options", {{"include_usage", true}}}};
      return client.Post("/v1/chat/completions", body.dump(), "application/json");
    };

    // Turn 1, streamed.
    const httplib::Result first = ask(true);
    QVERIFY(first);
    QCOMPARE(first->status, 200);
    const std::string first_reply = streamed_text(first->body);
    QVERIFY(!first_reply.empty());
    const std::size_t usage_at = first->body.rfind("\"usage\":");
    QVERIFY(usage_at != std::string::npos);
    const std::string usage_event = first->body.substr(first->body.rfind("data: {", usage_at) + 6);
    const nlohmann::json first_usage =
        nlohmann::json::parse(usage_event.substr(0, usage_event.find("\n\n")))["usage"];

    // Turn 2, whole: everything of turn 1 but its last id comes from the cache.
    messages.push_back({{"role", "assistant"}, {"content", first_reply}});
    messages.push_back({{"role", "user"}, {"content", "And the harbours?"}});
    const httplib::Result second = ask(false);
    QVERIFY(second);
    QCOMPARE(second->status, 200);
    const nlohmann::json second_body = nlohmann::json::parse(second->body);
    QCOMPARE(second_body["choices"][0]["finish_reason"].get<std::string>(), std::string("length"));
    const nlohmann::json& second_usage = second_body["usage"];
    QCOMPARE(second_usage["prompt_tokens_details"]["cached_tokens"].get<std::int64_t>(),
             first_usage["prompt_tokens"].get<std::int64_t>() +
                 first_usage["completion_tokens"].get<std::int64_t>() - 1);

    // Turn 3: the same for the whole reply of turn 2.
    messages.push_back(
        {{"role", "assistant"}, {"content", second_body["choices"][0]["message"]["content"]}});
    messages.push_back({{"role", "user"}, {"content", "Thank you."}});
    const httplib::Result third = ask(false);
    QVERIFY(third);
    QCOMPARE(third->status, 200);
    const nlohmann::json third_usage = nlohmann::json::parse(third->body)["usage"];
    QCOMPARE(third_usage["prompt_tokens_details"]["cached_tokens"].get<std::int64_t>(),
             second_usage["prompt_tokens"].get<std::int64_t>() +
                 second_usage["completion_tokens"].get<std::int64_t>() - 1);

    http.stop();
    serving.join();
  }
};

QUIRE_TEST(ReplyMemoryTest)
#include "test_reply_memory.moc"
