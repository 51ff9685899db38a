// The generator under a response format's grammar, on the small random
// model: every reply is a whole text of the grammar and ends by itself
// (StopReason::Eos) once complete, greedy and sampled, with whole rows and
// with the candidate path, alone and as alternatives; EOS and stop tokens
// come only where the text is complete; a grammar the vocabulary cannot
// spell ends with an error instead of a token it forbids.

#include <QTest>
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "quire/engine/generator/generator.h"
#include "quire/engine/generator/token_constraint.h"
#include "quire/engine/grammar/grammar.h"
#include "quire/engine/runtime/model_runtime.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "small_model.h"
#include "test_main.h"

using namespace quire;
using engine::Generator;
using engine::GeneratorConfig;
using engine::JobRequest;
using engine::JobResult;
using engine::ModelRuntime;
using engine::StopReason;
using test::prompt_of;
using test::qwen2_spec;
using test::small_options;
using test::SmallModel;
namespace grammar = engine::grammar;

Q_DECLARE_METATYPE(GeneratorConfig::Logits)

namespace {

// Bounded everywhere, so that every reply completes well within its tokens.
const char* const kPersonSchema = R"({
  "type": "object",
  "properties": {
    "name": {"type": "string", "maxLength": 12},
    "age": {"type": "integer", "minimum": 0, "maximum": 120},
    "tags": {"type": "array", "items": {"enum": ["red", "green", "blue"]}, "maxItems": 3},
    "ok": {"type": "boolean"}
  },
  "required": ["name", "age", "tags", "ok"]
})";

const char* const kChoiceSchema = R"({"enum": ["yes", "no", "maybe"]})";

JobRequest request_for(const std::string& schema, std::uint64_t seed, bool greedy) {
  JobRequest request;
  request.prompt = prompt_of(20, static_cast<std::uint32_t>(seed));
  request.grammar = grammar::compile_json_schema_text(schema);
  if (greedy) {
    request.sampling = engine::SamplingSettings::greedy_settings();
  } else {
    // The random model's logits are steep; a high temperature lets the
    // grammar's alternatives differ by seed.
    request.sampling.temperature = 20.0f;
    request.sampling.top_k = 0;
    request.sampling.top_p = 1.0f;
    request.sampling.seed = seed;
  }
  request.max_new_tokens = 200;
  return request;
}

}  // namespace

class ConstrainedGenerationTest : public QObject {
  Q_OBJECT

 private slots:
  void repliesAreWholeTextsOfTheGrammar_data() {
    QTest::addColumn<GeneratorConfig::Logits>("logits");
    QTest::addColumn<bool>("greedy");
    QTest::addColumn<QString>("schema");
    for (const auto& [name, logits] :
         {std::pair{"rows", GeneratorConfig::Logits::WholeRows},
          std::pair{"candidates", GeneratorConfig::Logits::Candidates}}) {
      for (const bool greedy : {true, false}) {
        const char* mode = greedy ? "greedy" : "sampled";
        QTest::addRow("%s %s person", name, mode) << logits << greedy << QString(kPersonSchema);
        QTest::addRow("%s %s choice", name, mode) << logits << greedy << QString(kChoiceSchema);
      }
    }
  }

  void repliesAreWholeTextsOfTheGrammar() {
    QFETCH(GeneratorConfig::Logits, logits);
    QFETCH(bool, greedy);
    QFETCH(QString, schema);
    const std::string schema_text = schema.toStdString();
    const auto compiled = grammar::compile_json_schema_text(schema_text);
    const SmallModel model(qwen2_spec(61));
    kernels::CpuBackend backend;
    ModelRuntime runtime(model.description, backend, small_options());
    GeneratorConfig config;
    config.logits = logits;
    Generator generator(runtime, *model.tokenizer, config);

    std::map<engine::JobId, std::string> streamed;
    std::vector<JobResult> results;
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      JobRequest request = request_for(schema_text, seed, greedy);
      request.on_text = [&](engine::JobId id, std::string_view text) { streamed[id] += text; };
      request.on_done = [&](const JobResult& done) { results.push_back(done); };
      generator.submit(std::move(request));
    }
    generator.run_until_idle();
    QCOMPARE(results.size(), std::size_t(4));
    for (const JobResult& result : results) {
      QVERIFY2(result.stop_reason == StopReason::Eos,
               qPrintable(QString::fromStdString(std::string(to_string(result.stop_reason)) + ": " +
                                                 result.error + " after " + result.text)));
      QVERIFY2(grammar::grammar_matches(*compiled, result.text), result.text.c_str());
      QVERIFY(nlohmann::json::accept(result.text));
      QCOMPARE(streamed[result.id], result.text);
    }
  }

  void alternativesEachKeepToTheGrammar() {
    const SmallModel model(qwen2_spec(62));
    kernels::CpuBackend backend;
    ModelRuntime runtime(model.description, backend, small_options());
    Generator generator(runtime, *model.tokenizer);
    JobRequest request = request_for(kPersonSchema, 5, false);
    std::vector<JobResult> results;
    request.on_done = [&](const JobResult& done) { results.push_back(done); };
    generator.submit_alternatives(std::move(request), 3);
    generator.run_until_idle();
    QCOMPARE(results.size(), std::size_t(3));
    const auto compiled = grammar::compile_json_schema_text(kPersonSchema);
    for (const JobResult& result : results) {
      QCOMPARE(result.stop_reason, StopReason::Eos);
      QVERIFY2(grammar::grammar_matches(*compiled, result.text), result.text.c_str());
    }
  }

  void endsByItselfWithoutEos() {
    // Without EOS as a stop, the reply still ends where nothing can follow.
    const SmallModel model(qwen2_spec(63));
    kernels::CpuBackend backend;
    ModelRuntime runtime(model.description, backend, small_options());
    Generator generator(runtime, *model.tokenizer);
    JobRequest request = request_for(kChoiceSchema, 2, true);
    request.stop_at_eos = false;
    JobResult result;
    request.on_done = [&](const JobResult& done) { result = done; };
    generator.submit(std::move(request));
    generator.run_until_idle();
    QCOMPARE(result.stop_reason, StopReason::Eos);
    QVERIFY(result.text == "\"yes\"" || result.text == "\"no\"" || result.text == "\"maybe\"");
  }

  void maxNewTokensStillCuts() {
    const SmallModel model(qwen2_spec(64));
    kernels::CpuBackend backend;
    ModelRuntime runtime(model.description, backend, small_options());
    Generator generator(runtime, *model.tokenizer);
    JobRequest request = request_for(kPersonSchema, 3, true);
    request.max_new_tokens = 3;
    JobResult result;
    request.on_done = [&](const JobResult& done) { result = done; };
    generator.submit(std::move(request));
    generator.run_until_idle();
    QCOMPARE(result.stop_reason, StopReason::MaxNewTokens);
    QCOMPARE(result.tokens.size(), std::size_t(3));
    QVERIFY(result.text.starts_with("{"));
  }

  void greedyTextThatFitsIsUnchanged_data() {
    QTest::addColumn<GeneratorConfig::Logits>("logits");
    QTest::newRow("rows") << GeneratorConfig::Logits::WholeRows;
    QTest::newRow("candidates") << GeneratorConfig::Logits::Candidates;
  }

  void greedyTextThatFitsIsUnchanged() {
    // A bias makes the unconstrained greedy reply digits 1 to 9, an integer
    // by then; constrained to integers, the greedy reply is the same tokens.
    QFETCH(GeneratorConfig::Logits, logits);
    const SmallModel model(qwen2_spec(65));
    engine::SamplingSettings sampling = engine::SamplingSettings::greedy_settings();
    for (std::int32_t id = 0; id < model.tokenizer->vocab_size(); ++id) {
      const std::string bytes = model.tokenizer->token_bytes(id);
      if (!bytes.empty() && bytes.find_first_not_of("123456789") == std::string::npos) {
        sampling.token_bias[id] = 1000.0f;
      }
    }
    QVERIFY(sampling.token_bias.size() >= 9);
    const auto run = [&](bool constrained) {
      kernels::CpuBackend backend;
      ModelRuntime runtime(model.description, backend, small_options());
      GeneratorConfig config;
      config.logits = logits;
      Generator generator(runtime, *model.tokenizer, config);
      JobRequest request;
      request.prompt = prompt_of(24, 9);
      request.sampling = sampling;
      request.max_new_tokens = 12;
      request.stop_at_eos = false;
      if (constrained) request.grammar = grammar::compile_json_schema_text(R"({"type":"integer"})");
      JobResult result;
      request.on_done = [&](const JobResult& done) { result = done; };
      generator.submit(std::move(request));
      generator.run_until_idle();
      return result;
    };
    const JobResult free = run(false);
    const JobResult constrained = run(true);
    QCOMPARE(free.stop_reason, StopReason::MaxNewTokens);
    QVERIFY(!free.text.empty() && free.text.find_first_not_of("123456789") == std::string::npos);
    QCOMPARE(constrained.stop_reason, StopReason::MaxNewTokens);
    QCOMPARE(constrained.tokens, free.tokens);
    QCOMPARE(constrained.text, free.text);
  }

  void endTokensOnlyWhereTheTextIsComplete() {
    // Vocabulary: "{", "}", "a", an EOS id without bytes and a stop token
    // that spells "}" (ids 0..4).
    const auto vocabulary = std::make_shared<const grammar::TokenVocabulary>(
        std::vector<std::string>{"{", "}", "a", "", "}"}, std::vector<std::int32_t>{3});
    engine::TokenConstraint constraint(grammar::any_json_object_grammar(), vocabulary, {3, 4});
    const auto allowed = [&](std::int32_t id) {
      return engine::mask_allows(constraint.mask(), id);
    };
    QVERIFY(allowed(0));
    QVERIFY(!allowed(3));
    QVERIFY(!allowed(4));  // a stop token waits for a complete text even when it spells one
    QVERIFY(!constraint.accept(3));
    QVERIFY(constraint.accept(0));
    QVERIFY(!constraint.complete());
    QVERIFY(allowed(1));
    QVERIFY(!allowed(4));
    QVERIFY(constraint.accept(1));
    // "{}" is complete and nothing may follow it.
    QVERIFY(constraint.complete());
    QVERIFY(allowed(3));
    QVERIFY(allowed(4));
    QVERIFY(!allowed(1));
    QVERIFY(constraint.accept(3));
  }

  // A strict tool's call under tool_choice "auto": the reply runs free until
  // the model writes the token that opens a call (a bias makes the random
  // model write it), and from there the grammar holds the call to its schema
  // and ends the reply when it is whole.
  void aLazyGrammarHoldsWhatFollowsItsTrigger() {
    const SmallModel model(qwen2_spec(65));
    kernels::CpuBackend backend;
    ModelRuntime runtime(model.description, backend, small_options());
    Generator generator(runtime, *model.tokenizer);
    // The trigger: the text of a token that spells a few letters.
    std::int32_t opener = -1;
    for (std::int32_t id = 300; id < model.tokenizer->vocab_size() && opener < 0; ++id) {
      const std::string bytes = model.tokenizer->token_bytes(id);
      if (bytes.size() >= 3 &&
          std::all_of(bytes.begin(), bytes.end(), [](char c) { return c >= 'a' && c <= 'z'; })) {
        opener = id;
      }
    }
    QVERIFY(opener >= 0);
    const std::string trigger = model.tokenizer->token_bytes(opener);
    JobRequest request = request_for(kPersonSchema, 7, true);
    request.grammar = grammar::compile_framed_json_schema_text(kPersonSchema, trigger, "");
    request.grammar_triggers = {{trigger}};
    request.sampling.token_bias[opener] = 1.0e4f;
    JobResult result;
    request.on_done = [&](const JobResult& done) { result = done; };
    generator.submit(std::move(request));
    generator.run_until_idle();
    QCOMPARE(result.stop_reason, StopReason::Eos);
    const std::size_t at = result.text.find(trigger);
    QVERIFY2(at != std::string::npos, result.text.c_str());
    const auto call = grammar::compile_framed_json_schema_text(kPersonSchema, trigger, "");
    QVERIFY2(grammar::grammar_matches(*call, result.text.substr(at)), result.text.c_str());
    // The bias would have written the opener again and again; the grammar
    // allowed it only where the schema did.
    QVERIFY(nlohmann::json::parse(result.text.substr(at + trigger.size())).is_object());
  }

  // A lazy grammar: free text until a trigger, then the grammar from the
  // trigger's first byte on.
  void aLazyGrammarTakesOverAtItsTrigger() {
    // Vocabulary: "hi ", "<c>", "{", "}", "x", EOS (ids 0..5).
    const auto vocabulary = std::make_shared<const grammar::TokenVocabulary>(
        std::vector<std::string>{"hi ", "<c>", "{", "}", "x", ""}, std::vector<std::int32_t>{5});
    const auto framed =
        grammar::compile_framed_json_schema_text("{\"type\": \"object\"}", "<c>", "");
    engine::TokenConstraint constraint(framed, vocabulary, {5}, {{"<c>"}});
    QVERIFY(!constraint.active());
    QVERIFY(constraint.mask().empty());  // dormant: every token may come
    QVERIFY(constraint.accept(4));
    constraint.observe_text("x");
    QVERIFY(constraint.accept(0));
    constraint.observe_text("hi ");
    QVERIFY(!constraint.active());
    QVERIFY(!constraint.complete());
    QVERIFY(constraint.accept(1));
    constraint.observe_text("<c>");
    QVERIFY(constraint.active());
    const auto allowed = [&](std::int32_t id) {
      return engine::mask_allows(constraint.mask(), id);
    };
    QVERIFY(allowed(2));
    QVERIFY(!allowed(4));
    QVERIFY(!allowed(5));
    QVERIFY(constraint.accept(2));
    QVERIFY(constraint.accept(3));
    QVERIFY(constraint.complete());

    // A trigger only at the start: text before it leaves the reply free.
    engine::TokenConstraint at_start(framed, vocabulary, {5}, {{"<c>", true}});
    at_start.observe_text("hi ");
    at_start.observe_text("<c>");
    QVERIFY(!at_start.active());
    QVERIFY(at_start.mask().empty());
    engine::TokenConstraint first(framed, vocabulary, {5}, {{"<c>", true}});
    first.observe_text("  <c>");
    QVERIFY(first.active());

    // A token that spells the trigger and what the grammar refuses leaves
    // the reply free for good.
    engine::TokenConstraint refused(framed, vocabulary, {5}, {{"<c>"}});
    refused.observe_text("<c>x");
    QVERIFY(!refused.active());
    refused.observe_text("<c>");
    QVERIFY(!refused.active());
  }

  void aGrammarTheVocabularyCannotSpellIsAnError() {
    const auto vocabulary = std::make_shared<const grammar::TokenVocabulary>(
        std::vector<std::string>{"a", "b", ""}, std::vector<std::int32_t>{2});
    engine::TokenConstraint constraint(grammar::compile_json_schema_text(R"({"const": "c"})"),
                                       vocabulary, {2});
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, constraint.mask());
    QVERIFY(!constraint.complete());
  }
};

QUIRE_TEST(ConstrainedGenerationTest)
#include "test_constrained_generation.moc"
