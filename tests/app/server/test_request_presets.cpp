// A request's "preset": parsed, its values filling only what the request
// leaves out (the request's own fields and system message win), an unknown
// name refused with a 400 that lists the presets, the catalog's fallback for
// requests that name none, and the job that comes of it.

#include <QTest>

#include "quire/server/api_error.h"
#include "quire/server/completion_job.h"
#include "quire/server/openai_request.h"
#include "quire/server/request_preset.h"
#include "served_model.h"
#include "test_main.h"

using namespace quire;
using quire::server::ChatCompletionRequest;
using quire::server::CompletionRequest;
using quire::server::PresetCatalog;
using quire::server::RequestPreset;

namespace {

RequestPreset creative() {
  RequestPreset preset;
  preset.name = "Creative";
  preset.system_prompt = "You are a storyteller.";
  preset.sampling.temperature = 1.2;
  preset.sampling.top_p = 0.9;
  preset.sampling.min_p = 0.1;
  preset.sampling.repetition_penalty = 1.05;
  preset.sampling.max_tokens = 7;
  return preset;
}

// A preset for roleplay: every tuned sampler set, and a context policy.
RequestPreset roleplay() {
  RequestPreset preset;
  preset.name = "Roleplay";
  server::SamplingFields& sampling = preset.sampling;
  sampling.dry_multiplier = 0.8;
  sampling.dry_base = 1.5;
  sampling.dry_allowed_length = 3;
  sampling.dry_range = 512;
  sampling.dry_sequence_breakers = std::vector<std::string>{"\n", "|"};
  sampling.xtc_threshold = 0.2;
  sampling.xtc_probability = 0.4;
  sampling.top_n_sigma = 1.5;
  sampling.mirostat = 2;
  sampling.mirostat_tau = 4;
  sampling.mirostat_eta = 0.2;
  preset.context_overflow = engine::ContextPolicy::TruncateMiddle;
  return preset;
}

PresetCatalog catalog_of_creative() {
  PresetCatalog catalog;
  catalog.find = [](const std::string& name) -> std::optional<RequestPreset> {
    if (name == "Creative") return creative();
    if (name == "Roleplay") return roleplay();
    return std::nullopt;
  };
  catalog.names = [] { return std::vector<std::string>{"Precise", "Creative"}; };
  return catalog;
}

// A one-message chat that names `preset` (none when empty), the catalog
// applied, and the job it becomes on `model`.
struct PresetChatJob {
  ChatCompletionRequest request;
  server::PreparedJob job;
};

PresetChatJob preset_chat_job(const test::Model& model, const std::string& preset) {
  const server::ServedModel served{"small", 4096,
                                   static_cast<int>(model.description->config.vocab_size)};
  const std::string named = preset.empty() ? std::string() : R"(, "preset": ")" + preset + "\"";
  PresetChatJob made;
  made.request = server::parse_chat_completion_request(
      R"({"messages": [{"role": "user", "content": "Hi"}])" + named + "}");
  server::apply_requested_preset(made.request, catalog_of_creative());
  made.job = server::prepare_chat_job(made.request, engine::PromptFormatId::ChatML,
                                      *model.tokenizer, served);
  return made;
}

}  // namespace

class RequestPresetsTest : public QObject {
  Q_OBJECT

 private slots:
  void theFieldIsParsed() {
    const ChatCompletionRequest chat = server::parse_chat_completion_request(
        R"({"messages": [{"role": "user", "content": "Hi"}], "preset": "Creative",
            "repetition_penalty": 1.1})");
    QCOMPARE(chat.preset, std::string("Creative"));
    QCOMPARE(chat.sampling.repetition_penalty, std::optional<double>(1.1));
    const CompletionRequest completion =
        server::parse_completion_request(R"({"prompt": "Once", "preset": "Code"})");
    QCOMPARE(completion.preset, std::string("Code"));
    try {
      server::parse_completion_request(R"({"prompt": "Once", "preset": 3})");
      QFAIL("a number was taken as a preset's name");
    } catch (const server::ApiException& error) {
      QCOMPARE(error.error().param, std::string("preset"));
    }
    try {
      server::parse_completion_request(R"({"prompt": "Once", "repetition_penalty": 0})");
      QFAIL("a repetition penalty of 0 was accepted");
    } catch (const server::ApiException& error) {
      QCOMPARE(error.error().message,
               std::string("repetition_penalty must be greater than 0 (1: off)."));
    }
  }

  void presetFillsWhatTheRequestLeavesOut() {
    ChatCompletionRequest request = server::parse_chat_completion_request(
        R"({"messages": [{"role": "user", "content": "Hi"}], "preset": "Creative",
            "temperature": 0.3})");
    server::apply_requested_preset(request, catalog_of_creative());
    QCOMPARE(request.sampling.temperature, std::optional<double>(0.3));  // the request's
    QCOMPARE(request.sampling.top_p, std::optional<double>(0.9));
    QCOMPARE(request.sampling.min_p, std::optional<double>(0.1));
    QCOMPARE(request.sampling.repetition_penalty, std::optional<double>(1.05));
    QCOMPARE(request.sampling.max_tokens, std::optional<std::int64_t>(7));
    QCOMPARE(request.turns.system, std::string("You are a storyteller."));
    QCOMPARE(request.messages.size(), std::size_t{2});
    QCOMPARE(request.messages.front().role, std::string("system"));
  }

  void theRequestsSystemMessageWins() {
    ChatCompletionRequest request = server::parse_chat_completion_request(
        R"({"messages": [{"role": "system", "content": "Be terse."},
                         {"role": "user", "content": "Hi"}], "preset": "Creative"})");
    server::apply_requested_preset(request, catalog_of_creative());
    QCOMPARE(request.turns.system, std::string("Be terse."));
    QCOMPARE(request.messages.size(), std::size_t{2});
    QCOMPARE(request.sampling.temperature, std::optional<double>(1.2));
  }

  void anUnknownPresetIsRefusedListingTheKnownOnes() {
    ChatCompletionRequest request = server::parse_chat_completion_request(
        R"({"messages": [{"role": "user", "content": "Hi"}], "preset": "Poetic"})");
    try {
      server::apply_requested_preset(request, catalog_of_creative());
      QFAIL("an unknown preset was accepted");
    } catch (const server::ApiException& error) {
      QCOMPARE(error.error().status, 400);
      QCOMPARE(error.error().param, std::string("preset"));
      QCOMPARE(error.error().message,
               std::string("preset \"Poetic\" is unknown. Available presets: Precise, Creative."));
    }
    try {
      server::apply_requested_preset(request, PresetCatalog{});
      QFAIL("a preset was accepted by a server without presets");
    } catch (const server::ApiException& error) {
      QCOMPARE(error.error().message,
               std::string("preset \"Poetic\" is unknown: this server has no presets."));
    }
  }

  void theFallbackServesRequestsThatNameNone() {
    PresetCatalog catalog = catalog_of_creative();
    RequestPreset fallback;
    fallback.name = "house";
    fallback.sampling.temperature = 0.5;
    catalog.fallback = fallback;
    CompletionRequest unnamed = server::parse_completion_request(R"({"prompt": "Once"})");
    server::apply_requested_preset(unnamed, catalog);
    QCOMPARE(unnamed.sampling.temperature, std::optional<double>(0.5));
    CompletionRequest named =
        server::parse_completion_request(R"({"prompt": "Once", "preset": "Creative"})");
    server::apply_requested_preset(named, catalog);
    QCOMPARE(named.sampling.temperature, std::optional<double>(1.2));
    QCOMPARE(named.sampling.max_tokens, std::optional<std::int64_t>(7));
  }

  void presetGivesEverySamplerAndTheContextPolicy() {
    const test::Model model(73);
    const PresetChatJob made = preset_chat_job(model, "Roleplay");
    QCOMPARE(made.request.context_overflow,
             std::optional<engine::ContextPolicy>(engine::ContextPolicy::TruncateMiddle));
    const engine::SamplingSettings& sampling = made.job.request.sampling;
    QCOMPARE(sampling.dry_multiplier, 0.8f);
    QCOMPARE(sampling.dry_base, 1.5f);
    QCOMPARE(sampling.dry_allowed_length, 3);
    QCOMPARE(sampling.dry_range, 512);
    QCOMPARE(sampling.dry_sequence_breakers, (std::vector<std::string>{"\n", "|"}));
    QCOMPARE(sampling.xtc_threshold, 0.2f);
    QCOMPARE(sampling.xtc_probability, 0.4f);
    QCOMPARE(sampling.top_n_sigma, 1.5f);
    QCOMPARE(sampling.mirostat, 2);
    QCOMPARE(sampling.mirostat_tau, 4.0f);
    QCOMPARE(sampling.mirostat_eta, 0.2f);
    // A completion takes the samplers; it has no turns to drop.
    CompletionRequest completion =
        server::parse_completion_request(R"({"prompt": "Once", "preset": "Roleplay"})");
    server::apply_requested_preset(completion, catalog_of_creative());
    QCOMPARE(completion.sampling.mirostat, std::optional<std::int64_t>(2));
    QCOMPARE(completion.sampling.dry_range, std::optional<std::int64_t>(512));
  }

  void theRequestsSamplersAndPolicyWinOverThePresets() {
    ChatCompletionRequest request = server::parse_chat_completion_request(
        R"({"messages": [{"role": "user", "content": "Hi"}], "preset": "Roleplay",
            "dry_multiplier": 0, "nsigma": 0.5, "mirostat_mode": 0, "xtc_probability": 0.1,
            "dry_sequence_breakers": ["."], "context_overflow": "rollingWindow"})");
    server::apply_requested_preset(request, catalog_of_creative());
    const server::SamplingFields& sampling = request.sampling;
    QCOMPARE(sampling.dry_multiplier, std::optional<double>(0));
    QCOMPARE(sampling.top_n_sigma, std::optional<double>(0.5));
    QCOMPARE(sampling.mirostat, std::optional<std::int64_t>(0));
    QCOMPARE(sampling.xtc_probability, std::optional<double>(0.1));
    QCOMPARE(sampling.dry_sequence_breakers,
             std::optional<std::vector<std::string>>(std::vector<std::string>{"."}));
    QCOMPARE(request.context_overflow,
             std::optional<engine::ContextPolicy>(engine::ContextPolicy::DropOldest));
    // What the request leaves out still comes from the preset.
    QCOMPARE(sampling.dry_base, std::optional<double>(1.5));
    QCOMPARE(sampling.xtc_threshold, std::optional<double>(0.2));
    QCOMPARE(sampling.mirostat_tau, std::optional<double>(4));
  }

  void theJobCarriesThePresetsValues() {
    const test::Model model(73);
    const engine::JobRequest job = preset_chat_job(model, "Creative").job.request;
    QCOMPARE(job.sampling.temperature, 1.2f);
    QCOMPARE(job.sampling.top_p, 0.9f);
    QCOMPARE(job.sampling.min_p, 0.1f);
    QCOMPARE(job.sampling.repetition_penalty, 1.05f);
    QCOMPARE(job.max_new_tokens, 7);
    const std::string prompt = model.tokenizer->decode(job.prompt, false);
    QVERIFY2(prompt.find("<|im_start|>system\nYou are a storyteller.") != std::string::npos,
             prompt.c_str());
    // Without a preset: OpenAI's defaults.
    const engine::JobRequest plain = preset_chat_job(model, "").job.request;
    QCOMPARE(plain.sampling.temperature, 1.0f);
    QCOMPARE(plain.sampling.repetition_penalty, 1.0f);
  }
};

QUIRE_TEST(RequestPresetsTest)
#include "test_request_presets.moc"
