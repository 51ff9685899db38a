// A chat's banned strings and biases by text, as the app sends them to a
// remote engine, read back by our own server's request parser: the same
// texts and biases arrive, a text of digits stays text, and nothing is sent
// for a chat without them.

#include <QTest>
#include <nlohmann/json.hpp>

#include "quire/remote/chat_request.h"
#include "quire/server/openai_request.h"
#include "test_main.h"

using quire::remote::chat_request_body;
using quire::remote::ChatSampling;

class RemoteTextRulesTest : public QObject {
  Q_OBJECT

 private slots:
  void ourServerReadsWhatTheAppSends() {
    ChatSampling sampling;
    sampling.banned_strings = {"As an AI", "\n###"};
    sampling.logit_bias_text = {{" Sure", -5.5}, {"42", 3}};
    const std::string body = chat_request_body("m", {{"user", "Hi"}}, sampling, 16);
    const quire::server::ChatCompletionRequest request =
        quire::server::parse_chat_completion_request(body);
    QCOMPARE(request.sampling.banned_strings, sampling.banned_strings);
    QCOMPARE(request.sampling.logit_bias_text, sampling.logit_bias_text);
    // "42" is text to tokenize, not token 42.
    QVERIFY(request.sampling.logit_bias.empty());
  }

  void nothingIsSentWithoutThem() {
    const nlohmann::json body =
        nlohmann::json::parse(chat_request_body("m", {{"user", "Hi"}}, ChatSampling{}, 16));
    QVERIFY(!body.contains("banned_strings"));
    QVERIFY(!body.contains("logit_bias"));
  }
};

QUIRE_TEST(RemoteTextRulesTest)
#include "test_remote_text_rules.moc"
