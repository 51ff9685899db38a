// Jobs whose prompts hold images (JobRequest::images): an image whose
// embeddings are the table's rows of some text gives that text's reply; the
// same image again is a prefix-cache hit that runs no tower; another image
// in its place is not; an image that attends both ways is never cut by a
// prefill chunk; and what submit() refuses, with its message.

#include <QTest>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "quire/engine/generator/generator.h"
#include "quire/engine/modelgen/random_model_spec.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "small_model.h"
#include "test_main.h"

using namespace quire;
using namespace quire::engine;

namespace {

constexpr int kReplyTokens = 8;

// An image whose embeddings are `rows`, counting how often they are asked for.
struct CountedImage {
  std::shared_ptr<PromptImage> image = std::make_shared<PromptImage>();
  std::shared_ptr<int> calls = std::make_shared<int>(0);

  CountedImage(std::vector<float> rows, int positions, bool both_ways) {
    std::vector<std::uint8_t> bytes(rows.size() * sizeof(float));
    if (!rows.empty()) std::memcpy(bytes.data(), rows.data(), bytes.size());
    image->digest = image_digest(bytes);
    image->positions = positions;
    image->both_ways = both_ways;
    image->embed = [rows = std::move(rows), calls = calls] {
      ++*calls;
      return rows;
    };
  }
};

// The embedding table's rows of `ids`, times the model's embedding scale.
std::vector<float> scaled_rows(ModelRuntime& runtime, kernels::CpuBackend& backend,
                               std::span<const cache::TokenId> ids) {
  const ModelConfig& c = runtime.model().config;
  std::vector<float> rows(ids.size() * std::size_t(c.hidden_size));
  backend.embedding(0, runtime.loaded().embedding, c.vocab_size, c.hidden_size, ids.data(),
                    std::int64_t(ids.size()), rows.data());
  for (float& value : rows)
    value *= runtime.model().embedding_scale;
  return rows;
}

// `before`, the image's ids, `after`.
JobRequest image_request(const std::vector<cache::TokenId>& before, const CountedImage& image,
                         const std::vector<cache::TokenId>& after) {
  JobRequest request;
  request.prompt = before;
  const std::vector<cache::TokenId> ids =
      image_position_ids(image.image->digest, image.image->positions);
  request.prompt.insert(request.prompt.end(), ids.begin(), ids.end());
  request.prompt.insert(request.prompt.end(), after.begin(), after.end());
  request.images.push_back({static_cast<std::int32_t>(before.size()), image.image});
  return request;
}

JobResult run(Generator& generator, JobRequest request) {
  request.sampling = SamplingSettings::greedy_settings();
  request.max_new_tokens = kReplyTokens;
  request.stop_at_eos = false;
  JobResult out;
  request.on_done = [&out](const JobResult& result) { out = result; };
  generator.submit(std::move(request));
  generator.run_until_idle();
  return out;
}

std::vector<cache::TokenId> slice(const std::vector<cache::TokenId>& v, int begin, int end) {
  return {v.begin() + begin, v.begin() + end};
}

engine::modelgen::RandomModelSpec both_ways_model_spec() {
  engine::modelgen::RandomModelSpec spec = engine::modelgen::default_spec("gemma3");
  spec.sliding_window = 8;
  spec.seed = 43;
  return spec;
}

}  // namespace

class ImageJobsTest : public QObject {
  Q_OBJECT

 private slots:
  // Qwen2 (causal over images): page 16, chunks of 64.
  void anImageIsItsEmbeddingsAndCachedByContent() {
    test::SmallModel model(test::qwen2_spec(29));
    kernels::CpuBackend backend;
    ModelRuntime runtime(model.description, backend, test::small_options());
    Generator generator(runtime, *model.tokenizer);
    const std::vector<cache::TokenId> text = test::prompt_of(90, 7);
    const std::vector<cache::TokenId> seen = slice(text, 20, 60);

    JobRequest plain;
    plain.prompt = text;
    const JobResult expected = run(generator, std::move(plain));
    QCOMPARE(int(expected.tokens.size()), kReplyTokens);

    // A fresh runtime, so nothing of the text job is cached.
    ModelRuntime fresh(model.description, backend, test::small_options());
    Generator images(fresh, *model.tokenizer);
    const CountedImage image(scaled_rows(fresh, backend, seen), 40, false);
    const JobResult first =
        run(images, image_request(slice(text, 0, 20), image, slice(text, 60, 90)));
    QCOMPARE(first.stop_reason, StopReason::MaxNewTokens);
    QCOMPARE(first.tokens, expected.tokens);
    QCOMPARE(*image.calls, 1);
    QCOMPARE(first.statistics.cached_tokens, std::int64_t{0});

    // Again: everything but the last token is found, the image (20..60)
    // included.
    const JobResult again =
        run(images, image_request(slice(text, 0, 20), image, slice(text, 60, 90)));
    QCOMPARE(again.tokens, expected.tokens);
    QCOMPARE(again.statistics.cached_tokens, std::int64_t{89});
    QCOMPARE(*image.calls, 1);

    // Another image in its place: only the text before it is found.
    std::vector<float> other_rows = scaled_rows(fresh, backend, slice(text, 30, 70));
    const CountedImage other(std::move(other_rows), 40, false);
    const JobResult different =
        run(images, image_request(slice(text, 0, 20), other, slice(text, 60, 90)));
    QCOMPARE(different.statistics.cached_tokens, std::int64_t{20});
    QCOMPARE(*other.calls, 1);
  }

  // Gemma 3 (both ways): a 40-position image from position 10 with steps of
  // 48 tokens would be cut at 48; the chunk before it ends at 10 and the
  // next takes it whole. The reply equals the one computed in a single step.
  void anImageThatAttendsBothWaysIsNeverCut() {
    test::SmallModel model(both_ways_model_spec());
    kernels::CpuBackend backend;
    const std::vector<cache::TokenId> text = test::prompt_of(64, 9);
    std::vector<cache::TokenId> reply_in_one_step;
    for (const int step_tokens : {128, 48}) {
      RuntimeOptions options = test::small_options();
      options.max_chunk_tokens = step_tokens;
      ModelRuntime runtime(model.description, backend, options);
      Generator generator(runtime, *model.tokenizer);
      const CountedImage image(scaled_rows(runtime, backend, slice(text, 10, 50)), 40, true);
      const JobResult result =
          run(generator, image_request(slice(text, 0, 10), image, slice(text, 50, 64)));
      QVERIFY2(result.error.empty(), result.error.c_str());
      QCOMPARE(int(result.tokens.size()), kReplyTokens);
      if (step_tokens == 128) {
        reply_in_one_step = result.tokens;
      } else {
        QCOMPARE(result.tokens, reply_in_one_step);
      }
      // Again, from the cache: the tower is not asked twice.
      run(generator, image_request(slice(text, 0, 10), image, slice(text, 50, 64)));
      QCOMPARE(*image.calls, 1);
    }
  }

  void promptsThatDoNotHoldTheirImagesAreRefused() {
    test::SmallModel model(both_ways_model_spec());
    kernels::CpuBackend backend;
    RuntimeOptions options = test::small_options();
    options.max_chunk_tokens = 48;
    ModelRuntime runtime(model.description, backend, options);
    Generator generator(runtime, *model.tokenizer);
    const std::vector<cache::TokenId> text = test::prompt_of(20, 3);
    const std::int64_t hidden = runtime.model().config.hidden_size;
    const auto refused = [&](JobRequest request, const QString& message) {
      try {
        generator.submit(std::move(request));
        QFAIL("the request was taken");
      } catch (const std::invalid_argument& error) {
        QCOMPARE(QString(error.what()), message);
      }
    };

    const CountedImage large(std::vector<float>(std::size_t(60 * hidden), 0.5f), 60, true);
    refused(image_request(text, large, text),
            "image 1 takes 60 positions that attend to each other, more than the 48 one step "
            "computes; raise the tokens per step to at least 60");

    const CountedImage image(std::vector<float>(std::size_t(12 * hidden), 0.5f), 12, true);
    JobRequest shifted = image_request(text, image, text);
    shifted.images.front().first = 19;
    refused(shifted, "the prompt's positions 19..31 do not hold the ids of image 1");

    JobRequest missing = image_request(text, image, text);
    missing.images.clear();
    refused(missing, QString("the prompt's token %1 at position 20 lies outside the vocabulary of "
                             "%2 and belongs to no image given")
                         .arg(missing.prompt[20])
                         .arg(runtime.model().config.vocab_size));

    JobRequest past = image_request(text, image, {});
    past.images.front().first = 25;
    refused(past, "image 1 takes positions 25..37, outside the prompt's 32 tokens");
  }

  // A tower that fails ends its job with the reason; the generator goes on.
  void aTowerThatFailsEndsItsJob() {
    test::SmallModel model(test::qwen2_spec(31));
    kernels::CpuBackend backend;
    ModelRuntime runtime(model.description, backend, test::small_options());
    Generator generator(runtime, *model.tokenizer);
    CountedImage image({}, 8, false);
    image.image->embed = []() -> std::vector<float> {
      throw std::runtime_error("the file ends inside its pixel data");
    };
    const std::vector<cache::TokenId> text = test::prompt_of(20, 4);
    const JobResult failed = run(generator, image_request(text, image, text));
    QCOMPARE(failed.stop_reason, StopReason::Error);
    QCOMPARE(QString::fromStdString(failed.error),
             QString("an image could not be read: the file ends inside its pixel data"));
    JobRequest plain;
    plain.prompt = text;
    QCOMPARE(int(run(generator, std::move(plain)).tokens.size()), kReplyTokens);
  }
};

QUIRE_TEST(ImageJobsTest)
#include "test_image_jobs.moc"
