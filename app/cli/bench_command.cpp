// quire-cli bench: prefill and decode speed, batch throughput, warm vs cold
// time to first token over a 10-turn conversation, KV bytes per token, how
// close decode comes to the memory-bandwidth bound, prefill as a fraction
// of the backend's own dense matrix-multiply rate, and decode of a reply
// that rewrites its prompt (bench_rewrite.h). With --draft the decode
// measurements draft, and report how many drafts the model accepted.
// --resume-tokens measures instead reopening a chat after a restart, from
// the disk cache (bench_disk_resume.h). --first-token times the first token
// of long fresh prompts through the scheduler; --no-conversation leaves the
// conversation out, for runs that compare kernels and need every second.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench_conversation.h"
#include "bench_disk_resume.h"
#include "bench_generate.h"
#include "bench_hardware.h"
#include "bench_rewrite.h"
#include "cli_support.h"
#include "conversation_runner.h"
#include "draft_option.h"
#include "generation_commands.h"
#include "hub_model_option.h"
#include "quire/kernels/cpu/cpu_backend.h"

namespace quire::cli {
namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct BenchOptions {
  std::string directory;
  bool json = false;
  int decode_tokens = 32;
  int repeats = 3;
  std::vector<int> prefill_lengths{512, 2048};
  std::vector<int> first_token_lengths;
  bool skip_conversation = false;
  std::vector<int> decode_contexts{128, 1024, 4096};
  std::vector<int> batch_sizes{1, 4, 16};
  int batch_tokens = 128;
  int turn_words = 40;
  int turn_reply = 48;
  int rewrite_tokens = 128;
  std::string prompt_file;
  int resume_tokens = 0;  // > 0: only the disk-resume workload
  std::string resume_folder;
  EngineOptions engine;
  DraftOptions draft;
};

std::vector<std::int32_t> random_prompt(int count, int vocab, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::int32_t> tokens(static_cast<std::size_t>(count));
  for (std::int32_t& token : tokens)
    token = static_cast<std::int32_t>(3 + rng() % (vocab - 3));
  return tokens;
}

// Each figure also goes to stderr as soon as it is measured, so a run that is
// stopped part way still leaves what it measured.
void progress(const std::string& line) {
  std::cerr << "bench: " << line << std::endl;
}

struct BatchRun {
  std::int64_t generated = 0;
  double tokens_per_s = 0;
  std::size_t most_running = 0;
  double mean_first_token_s = 0;
  std::int64_t preemptions = 0;
  std::int64_t computed_tokens = 0;
};

// `jobs` jobs of 64-token prompts submitted at once, each generating
// `tokens`; generated tokens over the wall time from submission to the last.
BatchRun run_batch(LoadedSession& session, int jobs, int vocab, std::uint32_t seed, int tokens) {
  BatchRun run;
  int finished = 0;
  double first_token_seconds = 0;
  const cache::CacheStats before = session.runtime->cache().stats();
  const Clock::time_point start = Clock::now();
  for (int j = 0; j < jobs; ++j) {
    engine::JobRequest request;
    request.prompt = random_prompt(64, vocab, seed + static_cast<std::uint32_t>(j));
    request.sampling = engine::SamplingSettings::greedy_settings();
    request.stop_at_eos = false;
    request.max_new_tokens = tokens;
    request.on_done = [&](const engine::JobResult& done) {
      ++finished;
      run.generated += done.statistics.generated_tokens;
      first_token_seconds += done.statistics.time_to_first_token;
    };
    session.generator->submit(std::move(request));
  }
  // Stepped here rather than run until idle, to see how many jobs the
  // cache's reservation policy lets run at once.
  while (session.generator->step())
    run.most_running = std::max(run.most_running, session.generator->running());
  const double elapsed = seconds_since(start);
  const cache::CacheStats after = session.runtime->cache().stats();
  run.tokens_per_s = double(run.generated) / elapsed;
  run.mean_first_token_s = first_token_seconds / std::max(1, finished);
  run.preemptions = after.preemptions - before.preemptions;
  run.computed_tokens = after.computed_tokens - before.computed_tokens;
  return run;
}

int run_bench(const BenchOptions& options) {
  const engine::DraftSettings draft = options.draft.settings();
  if (options.resume_tokens > 0) {
    const DiskResumeWorkload workload{options.directory, options.engine, options.resume_tokens,
                                      options.repeats, options.resume_folder};
    const nlohmann::ordered_json result = measure_disk_resume(workload);
    if (options.json) {
      std::cout << result.dump(2) << '\n';
    } else {
      print_disk_resume(result);
    }
    return 0;
  }
  // Read before the model loads: a missing file is refused at once.
  if (options.rewrite_tokens > 0) rewrite_message(options.prompt_file);
  EngineOptions engine = options.engine;
  if (engine.context == 0) engine.context = 8192;
  const int max_batch =
      std::max(16, *std::max_element(options.batch_sizes.begin(), options.batch_sizes.end()));
  LoadedSession session = load_session(options.directory, engine, engine.context, max_batch,
                                       options.draft.model_directory());
  const engine::ModelDescription& model = *session.model;
  const int vocab = static_cast<int>(model.config.vocab_size);
  Json out;
  out["model"] = options.directory;
  out["parameters"] = model.parameters;
  out["active_parameters"] = model.active_parameters;
  std::int64_t weight_bytes = model.final_norm_bytes + model.head.device_bytes;
  // What one token's decode reads: with a mixture of experts only the
  // experts it chose, so the bandwidth bound is that of the active weights.
  std::int64_t active_bytes = weight_bytes;
  for (const engine::LayerDescription& layer : model.layers) {
    weight_bytes += layer.device_bytes();
    active_bytes += layer.active_bytes(model.config.moe.experts_per_token);
  }
  out["weight_bytes"] = weight_bytes;
  out["active_weight_bytes"] = active_bytes;
  if (model.config.moe.experts > 0) {
    out["experts"] = {{"count", model.config.moe.experts},
                      {"per_token", model.config.moe.experts_per_token}};
  }
  out["cache_format"] = engine.cache;
  out["draft"] = {{"method", options.draft.draft}, {"max_tokens", draft.max_tokens}};
  out["devices"] = engine.devices;
  out["cpu"] = cpu_name();
  out["hardware_threads"] = std::thread::hardware_concurrency();
  if (const auto* cpu_backend = dynamic_cast<const kernels::CpuBackend*>(session.backend.get()))
    out["threads"] = cpu_backend->threads();
  // Decode reads the weights from the memory of the devices they sit on: the
  // host's for the CPU backend, the GPU's otherwise.
  const bool on_cpu = session.backend->name() == "cpu";
  const double copy = on_cpu ? copy_bandwidth() : device_copy_bandwidth(*session.backend, 0);
  out["copy_bandwidth_gb_s"] = copy / 1e9;
  out["copy_bandwidth_of"] = on_cpu ? "host memory" : "device 0 memory";
  progress("copy bandwidth " + std::to_string(copy / 1e9) + " GB/s");
  // On the CPU decode's bound is what all its threads read together: one
  // thread's copy came out below what two threads of decode read (Zen 4).
  double bandwidth = copy;
  if (const auto* cpu = dynamic_cast<const kernels::CpuBackend*>(session.backend.get())) {
    bandwidth = cpu->read_bandwidth();
    out["read_bandwidth_gb_s"] = bandwidth / 1e9;
  }
  out["bandwidth_bound_of"] = on_cpu ? "reads of host memory on every thread"
                                     : "a copy within device 0 memory, read and write counted";
  if (!on_cpu) out["device"] = session.backend->devices().front().name;

  // Only the lengths the cache can hold are measured, so a small --context
  // gives a shorter benchmark instead of an error.
  const std::int64_t capacity = std::int64_t(session.runtime->cache().config().num_pages) *
                                session.runtime->cache().config().page_size;
  out["cache_tokens"] = capacity;

  // Prefill of fresh prompts (nothing to reuse): --repeat runs, each of a
  // prompt of its own so that nothing comes from the cache, the median
  // reported.
  Json prefill = Json::array();
  for (const int length : options.prefill_lengths) {
    if (length > capacity) continue;
    std::vector<double> rates;
    for (int run = 0; run < options.repeats; ++run) {
      const std::vector<std::int32_t> prompt =
          random_prompt(length, vocab, 100 + length + 7919 * run);
      const Clock::time_point start = Clock::now();
      session.runtime->prefill(prompt, false);
      rates.push_back(length / seconds_since(start));
    }
    std::vector<double> sorted = rates;
    std::sort(sorted.begin(), sorted.end());
    const double rate = sorted[sorted.size() / 2];
    prefill.push_back({{"tokens", length},
                       {"seconds", length / rate},
                       {"tokens_per_s", rate},
                       {"runs_tokens_per_s", rates}});
    progress("prefill " + std::to_string(length) + " tokens: " + std::to_string(rate) +
             " tokens/s");
  }
  // Prefill against the dense product rate of the same backend, on the
  // device of the first layer: multiply-adds per token are the count of the
  // weights a token goes through -- with a mixture of experts only its
  // chosen experts' (the embedding lookup is no product; a tied head still
  // is one).
  const std::int64_t hidden = model.config.hidden_size;
  const std::int64_t embedding = model.head_tied ? 0 : std::int64_t{vocab} * hidden;
  const double multiply_adds_per_token = double(model.active_parameters - embedding);
  const std::int64_t matmul_rows = on_cpu ? 256 : 2048;
  const double product_rate =
      matmul_rate(*session.backend, 0, hidden, model.config.intermediate_size, matmul_rows);
  out["matmul"] = {{"rows", matmul_rows},
                   {"in", hidden},
                   {"out", model.config.intermediate_size},
                   {"multiply_adds_per_s", product_rate}};
  // On the CPU also against the machine's measured multiply-add peak, and
  // with the instruction-set path each kernel took.
  const auto* cpu = dynamic_cast<const kernels::CpuBackend*>(session.backend.get());
  kernels::MultiplyAddPeak peak;
  if (cpu != nullptr) {
    peak = cpu->multiply_add_peak();
    out["multiply_add_peak"] = {{"per_s", peak.per_second}, {"instructions", peak.instructions}};
    if (peak.integer_per_second > 0) {
      out["integer_multiply_add_peak"] = {{"per_s", peak.integer_per_second},
                                          {"instructions", peak.integer_instructions}};
    }
    Json paths = Json::object();
    for (const auto& [kernel, path] : kernels::CpuBackend::kernel_paths())
      paths[kernel] = path;
    out["kernel_paths"] = paths;
  }
  for (Json& p : prefill) {
    const double rate = p["tokens_per_s"].get<double>() * multiply_adds_per_token;
    p["fraction_of_matmul_rate"] = rate / product_rate;
    if (cpu != nullptr) p["fraction_of_peak"] = rate / peak.per_second;
    // EXL2 prefill on the integer tiles runs on the integer peak instead
    // (kernel_paths says which path the products took).
    if (peak.integer_per_second > 0) p["fraction_of_integer_peak"] = rate / peak.integer_per_second;
  }
  out["prefill"] = prefill;

  // Time to the first token of a fresh prompt submitted as a job: prefill in
  // the scheduler's chunks, the head and sampling, what a user waits for
  // after pasting a long text. Each run a prompt of its own, the median
  // reported.
  Json first_token = Json::array();
  for (const int length : options.first_token_lengths) {
    if (length >= capacity) continue;
    std::vector<double> times;
    for (int run = 0; run < options.repeats; ++run) {
      const engine::JobResult result =
          bench_generate(session, random_prompt(length, vocab, 500 + length + 7919 * run), 1);
      times.push_back(result.statistics.time_to_first_token);
    }
    std::vector<double> sorted = times;
    std::sort(sorted.begin(), sorted.end());
    first_token.push_back(
        {{"tokens", length}, {"seconds", sorted[sorted.size() / 2]}, {"runs_seconds", times}});
    progress("first token of a " + std::to_string(length) +
             "-token prompt: " + std::to_string(sorted[sorted.size() / 2]) + " s");
  }
  out["first_token"] = first_token;

  // Decode at several context lengths; bytes read per token: every weight plus
  // the K/V of the context.
  const cache::CacheFormatInfo& format =
      cache::format_info(session.runtime->cache().config().format);
  const std::int64_t kv_per_token =
      format.token_bytes(model.kv_shape()) * static_cast<std::int64_t>(model.layers.size());
  Json decode = Json::array();
  for (const int context : options.decode_contexts) {
    if (context + options.decode_tokens > capacity) continue;
    // The median of a few runs: on a shared machine single runs scatter.
    std::vector<double> rates;
    std::int64_t generated = 0, drafted = 0, accepted = 0;
    for (int run = 0; run < options.repeats; ++run) {
      const engine::JobResult result = bench_generate(
          session, random_prompt(context, vocab, 200 + context), options.decode_tokens, draft);
      rates.push_back(result.statistics.decode_tokens_per_second());
      generated += result.statistics.generated_tokens;
      drafted += result.statistics.drafted_tokens;
      accepted += result.statistics.accepted_tokens;
    }
    std::vector<double> sorted = rates;
    std::sort(sorted.begin(), sorted.end());
    const double rate = sorted[sorted.size() / 2];
    progress("decode at " + std::to_string(context) + " context: " + std::to_string(rate) +
             " tokens/s");
    const double bytes_per_token =
        double(active_bytes) + double(kv_per_token) * (context + options.decode_tokens / 2);
    Json entry{{"context", context},
               {"tokens_per_s", rate},
               {"runs_tokens_per_s", rates},
               {"bytes_per_token", bytes_per_token},
               {"fraction_of_bandwidth_bound", rate * bytes_per_token / bandwidth}};
    add_draft_fields(entry, generated, drafted, accepted);
    decode.push_back(std::move(entry));
  }
  out["decode"] = decode;

  // A reply that repeats its prompt: where drafting pays.
  if (options.rewrite_tokens > 0) {
    const RewriteWorkload workload{options.directory, options.prompt_file, options.rewrite_tokens,
                                   options.repeats, draft};
    out["rewrite"] = measure_rewrite(session, workload);
    progress("rewrite: " + std::to_string(out["rewrite"]["tokens_per_s"].get<double>()) +
             " tokens/s" + draft_text(out["rewrite"]));
  }

  // Concurrent jobs decoding together: first with their prompts computed
  // (what a burst of new requests gets, prefill included), then the same
  // jobs again, their prompts now in the cache, which leaves almost only
  // their decode steps. Each batch size has prompts of its own, so a
  // repeated size is not served from an earlier one's pages.
  Json batches = Json::array();
  for (std::size_t index = 0; index < options.batch_sizes.size(); ++index) {
    const int jobs = options.batch_sizes[index];
    const std::uint32_t seed = 300 + 1000 * static_cast<std::uint32_t>(index);
    const BatchRun cold = run_batch(session, jobs, vocab, seed, options.batch_tokens);
    const BatchRun cached = run_batch(session, jobs, vocab, seed, options.batch_tokens);
    batches.push_back({{"jobs", jobs},
                       {"generated_tokens", cold.generated},
                       {"tokens_per_s", cold.tokens_per_s},
                       {"decode_tokens_per_s", cached.tokens_per_s},
                       {"most_running", cold.most_running},
                       {"mean_first_token_s", cold.mean_first_token_s},
                       {"preemptions", cold.preemptions},
                       {"computed_tokens", cold.computed_tokens},
                       {"cached_run_computed_tokens", cached.computed_tokens}});
    progress(std::to_string(jobs) + " concurrent jobs: " + std::to_string(cold.tokens_per_s) +
             " tokens/s, " + std::to_string(cached.tokens_per_s) + " with cached prompts");
  }
  out["batch"] = batches;

  if (!options.skip_conversation) {
    const ConversationWorkload workload{options.directory, engine, options.repeats,
                                        options.turn_words, options.turn_reply};
    out["conversation"] = measure_conversation(session, workload);
  }

  // The named formats, and the one benchmarked when it is another pair.
  Json kv = Json::object();
  std::vector<cache::CacheFormat> priced(cache::all_cache_formats().begin(),
                                         cache::all_cache_formats().end());
  priced.push_back(session.runtime->cache().config().format);
  for (const cache::CacheFormat each : priced) {
    const cache::CacheFormatInfo& info = cache::format_info(each);
    kv[std::string(info.name)] = info.page_bytes(model.kv_shape(), 256).total() *
                                 static_cast<std::int64_t>(model.layers.size()) / 256.0;
  }
  out["kv_bytes_per_token"] = kv;
  // Whether decode steps ran as replayed graphs (CUDA), or op by op.
  const engine::StepGraphStatistics& graphs = session.runtime->forward().graphs().statistics();
  out["step_graphs"] = {{"enabled", session.runtime->forward().graphs().enabled()},
                        {"captures", graphs.captures},
                        {"replays", graphs.replays},
                        {"direct", graphs.direct},
                        {"failures", graphs.failures},
                        {"invalidations", graphs.invalidations},
                        {"first_failure", graphs.first_failure}};
  // How sampling read the logits: rows decided from candidates computed where
  // the logits are, and rows fetched whole because those did not decide
  // (both 0 where the backend's rows are host memory and go whole).
  const engine::SamplingCounters& sampling = session.generator->sampling_counters();
  out["sampling"] = {{"from_candidates", sampling.from_candidates},
                     {"row_fetches", sampling.row_fetches}};

  if (options.json) {
    std::cout << out.dump(2) << '\n';
    return 0;
  }
  std::printf("%s: %lld parameters, %s of weights, %s cache on %s\n", options.directory.c_str(),
              static_cast<long long>(model.parameters), human_bytes(weight_bytes).c_str(),
              engine.cache.c_str(), engine.devices.c_str());
  if (model.config.moe.experts > 0) {
    std::printf(
        "experts                   %d per layer, %d per token: %s of weights read per token\n",
        model.config.moe.experts, model.config.moe.experts_per_token,
        human_bytes(active_bytes).c_str());
  }
  std::printf("memory copy bandwidth     %8.1f GB/s\n", copy / 1e9);
  if (out.contains("read_bandwidth_gb_s")) {
    std::printf("memory read bandwidth    %8.1f GB/s (every thread; the decode bound)\n",
                bandwidth / 1e9);
  }
  std::printf("dense FP16 product        %8.1f G multiply-adds/s (%lld rows)\n", product_rate / 1e9,
              static_cast<long long>(matmul_rows));
  if (out.contains("multiply_add_peak")) {
    std::printf("multiply-add peak         %8.1f G/s (%s, %d threads)\n", peak.per_second / 1e9,
                peak.instructions.c_str(), out["threads"].get<int>());
    if (peak.integer_per_second > 0) {
      std::printf("integer multiply-add peak %8.1f G/s (%s)\n", peak.integer_per_second / 1e9,
                  peak.integer_instructions.c_str());
    }
    for (const auto& [kernel, path] : out["kernel_paths"].items())
      std::printf("  %s: %s\n", kernel.c_str(), path.get<std::string>().c_str());
  }
  for (const Json& p : prefill) {
    std::printf("prefill %5d tokens      %8.1f tokens/s  (%.0f%% of the product rate",
                p["tokens"].get<int>(), p["tokens_per_s"].get<double>(),
                100.0 * p["fraction_of_matmul_rate"].get<double>());
    if (p.contains("fraction_of_peak"))
      std::printf(", %.0f%% of the peak", 100.0 * p["fraction_of_peak"].get<double>());
    if (p.contains("fraction_of_integer_peak")) {
      std::printf(", %.0f%% of the integer peak",
                  100.0 * p["fraction_of_integer_peak"].get<double>());
    }
    std::printf(")\n");
  }
  for (const Json& d : decode) {
    std::printf("decode at %5d context   %8.1f tokens/s  (%.0f%% of the bandwidth bound%s)\n",
                d["context"].get<int>(), d["tokens_per_s"].get<double>(),
                100.0 * d["fraction_of_bandwidth_bound"].get<double>(), draft_text(d).c_str());
  }
  if (out.contains("rewrite")) {
    const Json& r = out["rewrite"];
    std::printf("rewrite (%4d-token prompt) %6.1f tokens/s  (--draft %s%s)\n",
                r["prompt_tokens"].get<int>(), r["tokens_per_s"].get<double>(),
                options.draft.draft.c_str(), draft_text(r).c_str());
  }
  const double one_job = batches.empty() || batches[0]["jobs"].get<int>() != 1
                             ? 0.0
                             : batches[0]["tokens_per_s"].get<double>();
  const double one_job_decode = one_job > 0 ? batches[0]["decode_tokens_per_s"].get<double>() : 0.0;
  for (const Json& b : batches) {
    std::printf("%3d concurrent jobs       %8.1f tokens/s", b["jobs"].get<int>(),
                b["tokens_per_s"].get<double>());
    if (one_job > 0) std::printf(" (%.2fx one job)", b["tokens_per_s"].get<double>() / one_job);
    std::printf(", prompts cached %8.1f tokens/s", b["decode_tokens_per_s"].get<double>());
    if (one_job_decode > 0)
      std::printf(" (%.2fx)", b["decode_tokens_per_s"].get<double>() / one_job_decode);
    std::printf("\n");
  }
  for (const Json& f : first_token) {
    std::printf("first token, %5d tokens  %8.3f s\n", f["tokens"].get<int>(),
                f["seconds"].get<double>());
  }
  if (out.contains("conversation")) {
    const Json& c = out["conversation"];
    std::printf(
        "time to first token      turn 1 %.3f s, turn 10 warm %.3f s, turn 10 cold %.3f s\n",
        c["turn_1_ttft_s"].get<double>(), c["turn_10_warm_ttft_s"].get<double>(),
        c["turn_10_cold_ttft_s"].get<double>());
  }
  std::printf(
      "decode step graphs        %s: %lld recorded, %lld replays, %lld steps op by op, "
      "%lld failed\n",
      session.runtime->forward().graphs().enabled() ? "on" : "off",
      static_cast<long long>(graphs.captures), static_cast<long long>(graphs.replays),
      static_cast<long long>(graphs.direct), static_cast<long long>(graphs.failures));
  std::printf("KV bytes per token      ");
  for (auto& [name, bytes] : kv.items())
    std::printf(" %s %.0f", name.c_str(), bytes.get<double>());
  std::printf("\n");
  return 0;
}

}  // namespace

void add_bench_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* command =
      app.add_subcommand("bench", "Measure prefill, decode, batching and cache reuse on a model");
  command->add_option("directory", options->directory, kModelDirectoryHelp)
      ->required()
      ->transform(hub_model_reference());
  command->add_flag("--json", options->json, "Print the numbers as JSON");
  command->add_option("--decode-tokens", options->decode_tokens, "Tokens per decode measurement")
      ->capture_default_str()
      ->check(CLI::Range(2, 4096));
  command
      ->add_option("--repeat", options->repeats,
                   "Runs of each prefill and decode measurement and of the 10-turn "
                   "conversation; the median is reported")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  command
      ->add_option("--prefill", options->prefill_lengths,
                   "Prompt lengths whose prefill is timed (those the cache holds)")
      ->delimiter(',')
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  command
      ->add_option("--first-token", options->first_token_lengths,
                   "Prompt lengths whose time to first token is timed: a fresh prompt submitted "
                   "as a job, one token generated (those the cache holds; default none)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1 << 20));
  command->add_flag("--no-conversation", options->skip_conversation,
                    "Leave out the 10-turn conversation and its cold last turn");
  command
      ->add_option("--decode-contexts", options->decode_contexts,
                   "Context lengths at which decode is timed (those the cache holds)")
      ->delimiter(',')
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  command
      ->add_option("--batches", options->batch_sizes,
                   "Numbers of concurrent jobs whose throughput is measured")
      ->delimiter(',')
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  command
      ->add_option("--batch-tokens", options->batch_tokens,
                   "Tokens each of the concurrent jobs generates")
      ->capture_default_str()
      ->check(CLI::Range(2, 4096));
  command
      ->add_option("--turn-words", options->turn_words,
                   "Words in each user message of the 10-turn conversation")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  command
      ->add_option("--turn-reply", options->turn_reply,
                   "Tokens of each reply in the 10-turn conversation")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  command
      ->add_option("--rewrite-tokens", options->rewrite_tokens,
                   "Tokens generated from a prompt that asks to rewrite a code block with one "
                   "change, the decode that --draft ngram speeds up (0: skipped)")
      ->capture_default_str()
      ->check(CLI::Range(0, 4096));
  command
      ->add_option("--prompt-file", options->prompt_file,
                   "The rewrite measurement's user message, instead of the built-in one")
      ->type_name("FILE");
  command
      ->add_option("--resume-tokens", options->resume_tokens,
                   "Measure only reopening a chat of this many tokens after a restart: time to "
                   "first token computed, warm, and restored from the disk cache by a new "
                   "runtime (--repeat runs, the median reported)")
      ->check(CLI::Range(1, 1 << 20));
  command
      ->add_option("--resume-folder", options->resume_folder,
                   "Folder in which --resume-tokens makes its disk cache (removed afterwards; "
                   "default: the system's temporary folder)")
      ->type_name("DIR");
  options->draft.add_to(*command);
  options->engine.add_to(*command, true);
  command->callback([options, &exit_code] { exit_code = run_bench(*options); });
}

}  // namespace quire::cli
