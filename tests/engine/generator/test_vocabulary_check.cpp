// The tokenizer against the model's embedding, where the generator joins
// them: a tokenizer with more tokens than the embedding has rows is refused
// with both numbers; an embedding padded beyond the tokenizer (Qwen2.5-7B's
// 152064 rows for 151665 tokens) never yields a pad id, on either way the
// generator reads logits. And every EOS id a model lists ends a reply.

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include "quire/engine/generator/generator.h"
#include "quire/engine/generator/vocabulary_check.h"
#include "quire/engine/model_error.h"
#include "quire/engine/modelgen/random_model.h"
#include "quire/engine/runtime/model_runtime.h"
#include "quire/engine/tokenizer/training.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "test_main.h"

using namespace quire;
using namespace quire::engine;

Q_DECLARE_METATYPE(quire::engine::GeneratorConfig::Logits)

namespace {

// A random model whose tokenizer.model is replaced by one of `tokenizer_size`
// pieces (0: as written).
struct PairedModel {
  QTemporaryDir directory;
  std::filesystem::path path;
  std::shared_ptr<const ModelDescription> description;
  std::unique_ptr<Tokenizer> tokenizer;

  PairedModel(int embedding_rows, int tokenizer_size) {
    path = std::filesystem::path(directory.path().toStdString()) / "model";
    modelgen::RandomModelSpec spec;
    spec.vocab = embedding_rows;
    spec.seed = 77;
    // An own head keeps logits of order one, so that temperature 1 spreads
    // draws over the whole vocabulary (tied ones are an order sharper).
    spec.tie_embeddings = false;
    modelgen::write_random_model(spec, path);
    if (tokenizer_size != 0) {
      std::filesystem::remove(path / "tokenizer.model");
      train_tokenizer(std::string(default_training_corpus()), tokenizer_size,
                      path / "tokenizer.model", 3);
    }
    description = std::make_shared<const ModelDescription>(ModelDescription::open(path));
    tokenizer = std::make_unique<Tokenizer>(Tokenizer::load(path));
  }
};

RuntimeOptions small_options() {
  RuntimeOptions options;
  options.cache_tokens = 64 * 16;
  options.page_size = 16;
  options.max_chunk_tokens = 64;
  options.max_sequences = 9;
  options.reserve_bytes = 0;
  return options;
}

// Every token of `jobs` replies sampled at temperature 1 with no filter that
// would keep low logits out.
std::vector<cache::TokenId> sample_widely(Generator& generator, int jobs, int tokens) {
  std::vector<cache::TokenId> sampled;
  for (int seed = 0; seed < jobs; ++seed) {
    JobRequest request;
    request.prompt = {1, 40, 41, 42, static_cast<cache::TokenId>(50 + seed)};
    request.sampling.temperature = 1.0f;
    request.sampling.top_k = 1000;
    request.sampling.top_p = 1.0f;
    request.sampling.repetition_penalty = 1.0f;
    request.sampling.seed = static_cast<std::uint64_t>(seed);
    request.max_new_tokens = tokens;
    request.stop_at_eos = false;
    request.on_done = [&](const JobResult& done) {
      sampled.insert(sampled.end(), done.tokens.begin(), done.tokens.end());
    };
    generator.submit(std::move(request));
  }
  generator.run_until_idle();
  return sampled;
}

int at_or_above(const std::vector<cache::TokenId>& tokens, int first) {
  return static_cast<int>(
      std::count_if(tokens.begin(), tokens.end(), [&](cache::TokenId id) { return id >= first; }));
}

}  // namespace

class VocabularyCheckTest : public QObject {
  Q_OBJECT

 private slots:
  void refusesATokenizerLargerThanTheEmbedding() {
    PairedModel model(320, 512);
    QCOMPARE(model.tokenizer->vocab_size(), 512);
    try {
      check_tokenizer_fits_model(*model.tokenizer, *model.description);
      QFAIL("a tokenizer of 512 tokens was accepted for 320 embedding rows");
    } catch (const ModelError& error) {
      QCOMPARE(QString::fromStdString(error.what()),
               QString::fromStdString(model.path.string()) +
                   QStringLiteral(": the tokenizer has 512 tokens but the model's embedding has "
                                  "only 320 rows; the tokenizer files do not belong to these "
                                  "weights (use the tokenizer files that came with the model)"));
    }
    // The generator, which both the CLI and the GUI build, refuses it as well.
    kernels::CpuBackend backend;
    ModelRuntime runtime(model.description, backend, small_options());
    QVERIFY_THROWS_EXCEPTION(ModelError, Generator(runtime, *model.tokenizer));
  }

  void numbersOfARealMismatch() {
    try {
      check_tokenizer_fits_model(128256, 512, "/models/tiny");
      QFAIL("accepted");
    } catch (const ModelError& error) {
      QVERIFY(QString::fromStdString(error.what())
                  .startsWith(QStringLiteral("/models/tiny: the tokenizer has 128256 tokens but "
                                             "the model's embedding has only 512 rows")));
    }
    check_tokenizer_fits_model(151665, 152064, "/models/qwen");  // padded: fine
    check_tokenizer_fits_model(512, 512, "/models/same");
  }

  void neverSamplesPaddedRows_data() {
    QTest::addColumn<GeneratorConfig::Logits>("logits");
    QTest::newRow("whole rows") << GeneratorConfig::Logits::WholeRows;
    QTest::newRow("candidates") << GeneratorConfig::Logits::Candidates;
  }

  void neverSamplesPaddedRows() {
    QFETCH(GeneratorConfig::Logits, logits);
    PairedModel model(512, 500);
    QCOMPARE(model.tokenizer->vocab_size(), 500);
    kernels::CpuBackend backend;
    ModelRuntime runtime(model.description, backend, small_options());
    GeneratorConfig config;
    config.logits = logits;
    Generator generator(runtime, *model.tokenizer, config);
    QCOMPARE(runtime.forward().masked_logits_from(), std::int64_t(500));

    const std::vector<cache::TokenId> sampled = sample_widely(generator, 40, 12);
    QCOMPARE(sampled.size(), std::size_t(40 * 12));
    QCOMPARE(at_or_above(sampled, 500), 0);

    // The same draws without the mask do reach the padded rows (the check
    // above can fail), and the tokenizer cannot even spell what they drew.
    runtime.forward().mask_logits_from(512);
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, sample_widely(generator, 40, 12));
  }

  void equalSizesMaskNothing() {
    PairedModel model(512, 0);
    kernels::CpuBackend backend;
    ModelRuntime runtime(model.description, backend, small_options());
    Generator generator(runtime, *model.tokenizer);
    QCOMPARE(runtime.forward().masked_logits_from(), std::int64_t(512));
  }

  void everyListedEosEndsAReply() {
    PairedModel model(512, 0);
    // Llama 3.1 lists three ids; generation_config.json decides over config.json.
    QFile generation(QString::fromStdString((model.path / "generation_config.json").string()));
    QVERIFY(generation.open(QIODevice::WriteOnly | QIODevice::Truncate));
    generation.write(R"({"bos_token_id": 1, "eos_token_id": [2, 300, 301]})");
    generation.close();
    const Tokenizer tokenizer = Tokenizer::load(model.path);
    QCOMPARE(tokenizer.eos(), (std::vector<std::int32_t>{2, 300, 301}));

    kernels::CpuBackend backend;
    ModelRuntime runtime(model.description, backend, small_options());
    Generator generator(runtime, tokenizer);
    for (const cache::TokenId eos : {2, 300, 301}) {
      JobRequest request;
      request.prompt = {1, 40, 41};
      request.sampling = SamplingSettings::greedy_settings();
      // The bias makes this id the argmax at the third reply token.
      request.max_new_tokens = 10;
      JobResult result;
      request.on_done = [&](const JobResult& done) { result = done; };
      request.sampling.token_bias[eos] = 1000.0f;
      generator.submit(std::move(request));
      generator.run_until_idle();
      QCOMPARE(result.stop_reason, StopReason::Eos);
      QVERIFY(result.tokens.empty());
    }
  }
};

QUIRE_TEST(VocabularyCheckTest)
#include "test_vocabulary_check.moc"
