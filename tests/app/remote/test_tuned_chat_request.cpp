// DRY, XTC, top-nσ and mirostat in the body sent to a remote engine: nothing
// while off, llama.cpp's server's fields while on.

#include <QTest>
#include <nlohmann/json.hpp>

#include "quire/remote/chat_request.h"
#include "test_main.h"

using nlohmann::json;
using quire::remote::chat_request_body;
using quire::remote::ChatSampling;

class TunedChatRequestTest : public QObject {
  Q_OBJECT

 private slots:
  void offSendsNothing() {
    ChatSampling off;
    off.xtc_threshold = 0.6;  // above 0.5 XTC is off whatever the probability
    off.xtc_probability = 1;
    const json body = json::parse(chat_request_body("m", {{"user", "Hi"}}, off, 16));
    for (const char* absent :
         {"dry_multiplier", "dry_base", "dry_allowed_length", "dry_penalty_last_n",
          "dry_sequence_breakers", "xtc_threshold", "xtc_probability", "top_n_sigma", "mirostat",
          "mirostat_tau", "mirostat_eta"}) {
      QVERIFY2(!body.contains(absent), absent);
    }
  }

  void onSendsLlamaCppsFields() {
    ChatSampling on;
    on.dry_multiplier = 0.8;
    on.dry_base = 2;
    on.dry_allowed_length = 3;
    on.dry_sequence_breakers = {"\n", ":"};
    on.xtc_threshold = 0.1;
    on.xtc_probability = 0.5;
    on.top_n_sigma = 1.5;
    on.mirostat = true;
    on.mirostat_tau = 4;
    on.mirostat_eta = 0.2;
    const json body = json::parse(chat_request_body("m", {{"user", "Hi"}}, on, 16));
    QVERIFY(body["dry_multiplier"] == json(0.8));
    QVERIFY(body["dry_base"] == json(2.0));
    QVERIFY(body["dry_allowed_length"] == json(3));
    QVERIFY(body["dry_penalty_last_n"] == json(-1));  // the whole context
    QVERIFY(body["dry_sequence_breakers"] == (json{"\n", ":"}));
    QVERIFY(body["xtc_threshold"] == json(0.1));
    QVERIFY(body["xtc_probability"] == json(0.5));
    QVERIFY(body["top_n_sigma"] == json(1.5));
    QVERIFY(body["mirostat"] == json(2));
    QVERIFY(body["mirostat_tau"] == json(4.0));
    QVERIFY(body["mirostat_eta"] == json(0.2));
    on.dry_range = 128;
    QVERIFY(json::parse(chat_request_body("m", {{"user", "Hi"}}, on, 16))["dry_penalty_last_n"] ==
            json(128));
  }
};

QUIRE_TEST(TunedChatRequestTest)
#include "test_tuned_chat_request.moc"
