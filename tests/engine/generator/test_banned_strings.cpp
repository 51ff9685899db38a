// Banned strings: the guard on its own (held text, case folding, the token a
// match began at, partial characters, the reply's end), and the generator on
// the small random model: a banned string never reaches the reply or its
// stream, the reply goes back to the token where the string began and draws
// there again with that token banned (checked against a one-token reply with
// the token banned), the same with whole rows and with candidates, across a
// page boundary, seeded sampling reproducible, and a grammar refused.

#include <QTest>
#include <optional>
#include <string>
#include <vector>

#include "quire/engine/generator/banned_strings.h"
#include "quire/engine/generator/generator.h"
#include "quire/engine/grammar/grammar.h"
#include "quire/engine/runtime/model_runtime.h"
#include "quire/engine/tokenizer/text_case.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "small_model.h"
#include "test_main.h"

using namespace quire;
using engine::BannedStringGuard;
using engine::Generator;
using engine::GeneratorConfig;
using engine::JobRequest;
using engine::JobResult;
using engine::ModelRuntime;
using test::prompt_of;
using test::qwen2_spec;
using test::small_options;
using test::SmallModel;

Q_DECLARE_METATYPE(GeneratorConfig::Logits)

namespace {

constexpr int kPromptTokens = 20;
constexpr int kReplyTokens = 40;

struct Reply {
  JobResult result;
  std::string streamed;
};

JobRequest greedy_request(std::uint32_t seed) {
  JobRequest request;
  request.prompt = prompt_of(kPromptTokens, seed);
  request.sampling = engine::SamplingSettings::greedy_settings();
  request.max_new_tokens = kReplyTokens;
  request.stop_at_eos = false;
  return request;
}

class BannedRun {
 public:
  explicit BannedRun(GeneratorConfig::Logits logits = GeneratorConfig::Logits::WholeRows)
      : model_(qwen2_spec(71)),
        runtime_(model_.description, backend_, small_options()),
        generator_(runtime_, *model_.tokenizer, config(logits)) {}

  Reply run(JobRequest request) {
    Reply reply;
    request.on_text = [&](engine::JobId, std::string_view text) { reply.streamed += text; };
    request.on_done = [&](const JobResult& result) { reply.result = result; };
    generator_.submit(std::move(request));
    generator_.run_until_idle();
    return reply;
  }
  Generator& generator() { return generator_; }
  const engine::Tokenizer& tokenizer() const { return *model_.tokenizer; }

 private:
  static GeneratorConfig config(GeneratorConfig::Logits logits) {
    GeneratorConfig config;
    config.logits = logits;
    return config;
  }
  kernels::CpuBackend backend_;
  SmallModel model_;
  ModelRuntime runtime_;
  Generator generator_;
};

// Bytes of the reply's text before each of its tokens: before[k] for k in
// [0, tokens], decoded as prefixes.
std::vector<std::size_t> text_offsets(const engine::Tokenizer& tokenizer,
                                      const std::vector<cache::TokenId>& tokens) {
  std::vector<std::size_t> before;
  for (std::size_t k = 0; k <= tokens.size(); ++k)
    before.push_back(tokenizer.decode(std::span(tokens.data(), k)).size());
  return before;
}

// The token whose text holds byte `position` of the reply.
int token_at(const std::vector<std::size_t>& before, std::size_t position) {
  for (std::size_t k = 0; k + 1 < before.size(); ++k) {
    if (position < before[k + 1]) return static_cast<int>(k);
  }
  return -1;
}

bool contains_folded(const std::string& text, const std::string& banned) {
  return engine::lowercase_text(text).find(engine::lowercase_text(banned)) != std::string::npos;
}

}  // namespace

class BannedStringsTest : public QObject {
  Q_OBJECT

 private slots:
  void guardHoldsWhatMayBeginABannedString() {
    BannedStringGuard guard({"hello", "world"});
    QCOMPARE(guard.feed(0, "say "), std::string("say "));
    QCOMPARE(guard.feed(1, "hel"), std::string());
    QCOMPARE(guard.held(), std::string("hel"));
    QCOMPARE(guard.feed(2, "p"), std::string("help"));
    // A token's text is held whole: the space begins nothing, but " wor"
    // came as one piece.
    QCOMPARE(guard.feed(3, " wor"), std::string());
    QCOMPARE(guard.held(), std::string(" wor"));
    QCOMPARE(guard.release(), std::string(" wor"));
    QCOMPARE(guard.held(), std::string());
  }

  void guardNamesTheTokenAMatchBeganAt() {
    BannedStringGuard guard({"hello"});
    QCOMPARE(guard.feed(0, "oh "), std::string("oh "));
    QCOMPARE(guard.feed(1, "h"), std::string());
    QCOMPARE(guard.feed(2, "el"), std::string());
    QCOMPARE(guard.match_if_fed(3, "l"), std::nullopt);
    QCOMPARE(guard.match_if_fed(3, "lo!"), std::optional<int>(1));
    // Within one token's text, the match begins at that token.
    QCOMPARE(guard.match_if_fed(3, "p hello"), std::optional<int>(3));
    // Asking changes nothing.
    QCOMPARE(guard.held(), std::string("hel"));
    guard.rewind(2);
    QCOMPARE(guard.held(), std::string("h"));
    guard.rewind(1);
    QCOMPARE(guard.held(), std::string());
  }

  void guardFoldsCase() {
    BannedStringGuard guard({"Delve", "ÉTÉ"});
    QCOMPARE(guard.banned(), (std::vector<std::string>{"delve", "été"}));
    QCOMPARE(guard.match_if_fed(0, "we DELVE"), std::optional<int>(0));
    QCOMPARE(guard.feed(0, "un É"), std::string());
    QCOMPARE(guard.match_if_fed(1, "tÉ"), std::optional<int>(0));
  }

  void guardTracesAPartialCharacterToItsFirstToken() {
    BannedStringGuard guard({"é"});
    QCOMPARE(guard.feed(0, "a"), std::string("a"));
    // Tokens 1 and 2 hold only bytes of a character that token 3 completes.
    QCOMPARE(guard.feed(1, ""), std::string());
    QCOMPARE(guard.feed(2, ""), std::string());
    QCOMPARE(guard.match_if_fed(3, "é"), std::optional<int>(1));
    QCOMPARE(guard.match_if_fed(3, "è"), std::nullopt);
    QCOMPARE(guard.feed(3, "è"), std::string("è"));
  }

  void guardCutsTheEndBeforeAMatch() {
    BannedStringGuard guard({"the end"});
    QCOMPARE(guard.feed(0, "so the"), std::string());
    // Folding kept the piece's length: the cut is exact.
    QCOMPARE(guard.finish(" end?"), std::string("so "));
    BannedStringGuard unmatched({"the end"});
    QCOMPARE(unmatched.feed(0, "so the"), std::string());
    QCOMPARE(unmatched.finish(" en"), std::string("so the en"));
    // Where folding changes a piece's length, the cut falls at its start.
    BannedStringGuard unicode({"i̇x"});
    QCOMPARE(unicode.feed(0, "ok "), std::string("ok "));
    QCOMPARE(unicode.finish("aİx"), std::string());
    BannedStringGuard ascii({"x"});
    QCOMPARE(ascii.finish("aax"), std::string("aa"));
  }

  void guardRefusesTextThatIsNotUtf8() {
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, BannedStringGuard({std::string("\xC3")}));
    QVERIFY(BannedStringGuard({"", ""}).empty());
    QCOMPARE(BannedStringGuard({"a", "A"}).banned().size(), std::size_t(1));
  }

  void replyGoesBackToWhereABannedStringBegan_data() {
    QTest::addColumn<GeneratorConfig::Logits>("logits");
    QTest::addColumn<int>("first");
    QTest::addColumn<int>("length");
    QTest::addColumn<bool>("upper");
    QTest::newRow("rows, several tokens") << GeneratorConfig::Logits::WholeRows << 6 << 3 << false;
    QTest::newRow("candidates, several tokens")
        << GeneratorConfig::Logits::Candidates << 6 << 3 << false;
    QTest::newRow("rows, one token") << GeneratorConfig::Logits::WholeRows << 9 << 1 << false;
    QTest::newRow("rows, upper case") << GeneratorConfig::Logits::WholeRows << 6 << 3 << true;
    // Prompt 20 + 12 fills the second 16-token page: the match begins in a
    // page that is sealed by the time it completes.
    QTest::newRow("rows, across a page") << GeneratorConfig::Logits::WholeRows << 10 << 5 << false;
  }
  void replyGoesBackToWhereABannedStringBegan() {
    QFETCH(GeneratorConfig::Logits, logits);
    QFETCH(int, first);
    QFETCH(int, length);
    QFETCH(bool, upper);
    BannedRun run(logits);
    const Reply plain = run.run(greedy_request(5));
    QCOMPARE(plain.result.tokens.size(), std::size_t(kReplyTokens));
    const std::vector<std::size_t> before = text_offsets(run.tokenizer(), plain.result.tokens);
    QCOMPARE(plain.result.text.size(), before.back());
    std::string banned =
        plain.result.text.substr(before[std::size_t(first)],
                                 before[std::size_t(first + length)] - before[std::size_t(first)]);
    QVERIFY2(!banned.empty(), "the chosen tokens have text");
    // Where the guard finds it first: the earliest place it appears.
    const std::size_t found =
        engine::lowercase_text(plain.result.text).find(engine::lowercase_text(banned));
    const int began = token_at(before, found);
    QVERIFY(began >= 0 && began <= first);
    if (upper) banned = QString::fromStdString(banned).toUpper().toStdString();

    JobRequest request = greedy_request(5);
    request.banned_strings = {banned};
    const Reply guarded = run.run(request);
    QCOMPARE(guarded.result.stop_reason, engine::StopReason::MaxNewTokens);
    QVERIFY(!contains_folded(guarded.result.text, banned));
    QCOMPARE(guarded.streamed, guarded.result.text);
    QCOMPARE(guarded.result.text, run.tokenizer().decode(guarded.result.tokens));
    QVERIFY(guarded.result.statistics.banned_rewinds >= 1);
    QCOMPARE(guarded.result.statistics.preemptions, 0);
    QCOMPARE(guarded.result.tokens.size(), std::size_t(kReplyTokens));
    // Token for token as without the ban up to where it began, then what
    // the model chooses there with that token banned.
    for (int k = 0; k < began; ++k)
      QCOMPARE(guarded.result.tokens[std::size_t(k)], plain.result.tokens[std::size_t(k)]);
    JobRequest alternative = greedy_request(5);
    alternative.prompt.insert(alternative.prompt.end(), plain.result.tokens.begin(),
                              plain.result.tokens.begin() + began);
    alternative.sampling.banned_tokens = {plain.result.tokens[std::size_t(began)]};
    alternative.max_new_tokens = 1;
    const Reply instead = run.run(alternative);
    QCOMPARE(instead.result.tokens.size(), std::size_t(1));
    QCOMPARE(guarded.result.tokens[std::size_t(began)], instead.result.tokens[0]);
  }

  void seededSamplingWithBansRepeats() {
    BannedRun run;
    JobRequest request = greedy_request(8);
    request.sampling = engine::SamplingSettings{};
    request.sampling.temperature = 3.0f;
    request.sampling.top_k = 0;
    request.sampling.top_p = 1.0f;
    request.sampling.seed = 1234;
    const Reply plain = run.run(request);
    const std::vector<std::size_t> before = text_offsets(run.tokenizer(), plain.result.tokens);
    const std::string banned = plain.result.text.substr(before[4], before[7] - before[4]);
    request.banned_strings = {banned, "never appears anywhere"};
    const Reply first = run.run(request);
    const Reply second = run.run(request);
    QVERIFY(!contains_folded(first.result.text, banned));
    QVERIFY(first.result.statistics.banned_rewinds >= 1);
    QCOMPARE(first.result.tokens, second.result.tokens);
    QCOMPARE(first.streamed, first.result.text);
  }

  void aGrammarAndBannedStringsAreRefused() {
    BannedRun run;
    JobRequest request = greedy_request(3);
    request.grammar = engine::grammar::compile_json_schema_text(R"({"enum": ["yes", "no"]})");
    request.banned_strings = {"yes"};
    try {
      run.generator().submit(std::move(request));
      QFAIL("submit accepted banned strings with a grammar");
    } catch (const std::invalid_argument& error) {
      QVERIFY(std::string(error.what()).find("banned strings") != std::string::npos);
    }
  }
};

QUIRE_TEST(BannedStringsTest)
#include "test_banned_strings.moc"
