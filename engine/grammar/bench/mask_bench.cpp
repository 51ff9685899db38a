// quire-grammar-bench: the cost of a token mask per sampling step.
//
//   quire-grammar-bench MODEL_DIR SCHEMA.json... [json_object] [--walks N]
//
// Loads the tokenizer of MODEL_DIR, builds its vocabulary trie, and for each
// schema (a file, or json_object for any JSON object) generates --walks
// replies (default 20) by sampling uniformly among the allowed tokens, each
// with a fresh TokenMatcher as a request would have, so first visits to each
// state are counted, and again with one matcher per schema reset() between
// replies. Every allowed_tokens() call is timed in the thread's CPU time. Prints, for each way, one
// Markdown table row per schema: steps, mean, p50, p99 and max per step, and
// the schema's compile time.
#include <time.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "quire/engine/grammar/grammar.h"
#include "quire/engine/grammar/token_matcher.h"
#include "quire/engine/grammar/token_vocabulary.h"
#include "quire/engine/tokenizer/tokenizer.h"

namespace {

using Clock = std::chrono::steady_clock;
namespace grammar = quire::engine::grammar;

double microseconds(Clock::duration duration) {
  return std::chrono::duration<double, std::micro>(duration).count();
}

// CPU time of this thread in microseconds: what a step costs, without the
// time other processes on a shared machine take the core away.
double thread_microseconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) * 1e6 + static_cast<double>(now.tv_nsec) / 1e3;
}

std::string read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::runtime_error("cannot read " + path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

struct Timings {
  std::vector<double> steps;  // microseconds per allowed_tokens()
  int unfinished = 0;
};

// Uniform among the allowed tokens; after 64 steps, the end of text when
// allowed, else tokens that close something, so that every reply ends.
std::int32_t pick(const std::vector<std::int32_t>& allowed, const grammar::TokenVocabulary& vocab,
                  int step, std::mt19937& random) {
  auto uniform = [&](const std::vector<std::int32_t>& ids) {
    return ids[std::uniform_int_distribution<std::size_t>(0, ids.size() - 1)(random)];
  };
  if (step < 64) return uniform(allowed);
  for (const char* closers : {"", "}]", "\""}) {
    std::vector<std::int32_t> preferred;
    for (const std::int32_t id : allowed) {
      if (*closers == '\0' ? vocab.is_eos(id)
                           : vocab.bytes(id).find_first_of(closers) != std::string::npos) {
        preferred.push_back(id);
      }
    }
    if (!preferred.empty()) return uniform(preferred);
  }
  return uniform(allowed);
}

// reuse: one matcher, reset() between replies, as a server that keeps a
// matcher per schema would; else a fresh matcher per reply.
Timings run(const std::shared_ptr<const grammar::Grammar>& compiled,
            const std::shared_ptr<const grammar::TokenVocabulary>& vocab, int walks, bool reuse) {
  Timings timings;
  std::vector<std::uint32_t> mask(vocab->mask_words());
  std::vector<std::int32_t> allowed;
  grammar::TokenMatcher kept(compiled, vocab);
  for (int walk = 0; walk < walks; ++walk) {
    std::mt19937 random(static_cast<unsigned>(walk + 1));
    grammar::TokenMatcher fresh(compiled, vocab);
    grammar::TokenMatcher& matcher = reuse ? kept : fresh;
    matcher.reset();
    for (int step = 0; step < 2000 && !matcher.is_finished(); ++step) {
      const double start = thread_microseconds();
      matcher.allowed_tokens(mask);
      timings.steps.push_back(thread_microseconds() - start);
      allowed.clear();
      for (std::size_t word = 0; word < mask.size(); ++word) {
        for (std::uint32_t bits = mask[word]; bits != 0; bits &= bits - 1) {
          allowed.push_back(static_cast<std::int32_t>(word * 32) + std::countr_zero(bits));
        }
      }
      if (allowed.empty()) throw std::runtime_error("the grammar allowed nothing");
      if (!matcher.accept(pick(allowed, *vocab, step, random))) {
        throw std::runtime_error("an allowed token was refused");
      }
    }
    timings.unfinished += !matcher.is_finished();
  }
  return timings;
}

double mean(const std::vector<double>& values) {
  double sum = 0;
  for (const double v : values)
    sum += v;
  return sum / static_cast<double>(values.size());
}

double percentile(std::vector<double> values, double fraction) {
  std::sort(values.begin(), values.end());
  const auto index = static_cast<std::size_t>(fraction * static_cast<double>(values.size() - 1));
  return values[index];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: quire-grammar-bench MODEL_DIR SCHEMA.json... [json_object] [--walks N]\n";
    return 2;
  }
  try {
    int walks = 20;
    std::vector<std::string> schemas;
    for (int i = 2; i < argc; ++i) {
      const std::string argument = argv[i];
      if (argument == "--walks" && i + 1 < argc) {
        walks = std::stoi(argv[++i]);
      } else {
        schemas.push_back(argument);
      }
    }
    const auto load_start = Clock::now();
    const auto tokenizer = quire::engine::Tokenizer::load(argv[1]);
    const auto vocab_start = Clock::now();
    const auto vocab = grammar::TokenVocabulary::from_tokenizer(tokenizer);
    const auto vocab_end = Clock::now();
    std::printf(
        "Vocabulary: %d tokens, %zu trie nodes (%zu in the trie of tokens that are not plain "
        "string content; the longest plain token has %d characters), built in %.0f ms (tokenizer "
        "loaded in %.0f ms).\n\n",
        vocab->size(), vocab->trie().nodes.size(), vocab->structural_trie().nodes.size(),
        vocab->longest_plain_token(), microseconds(vocab_end - vocab_start) / 1000,
        microseconds(vocab_start - load_start) / 1000);
    for (const bool reuse : {false, true}) {
      std::printf(reuse ? "\nOne matcher per schema, reset() between replies (states and masks "
                          "stay memoized):\n\n"
                        : "A fresh matcher per reply:\n\n");
      std::printf("| schema | compile | steps | mean | p50 | p99 | max |\n");
      std::printf("|---|---|---|---|---|---|---|\n");
      std::vector<double> all;
      for (const std::string& schema : schemas) {
        const auto compile_start = Clock::now();
        const auto compiled = schema == "json_object"
                                  ? grammar::any_json_object_grammar()
                                  : grammar::compile_json_schema_text(read_file(schema));
        const double compile_us = microseconds(Clock::now() - compile_start);
        const Timings timings = run(compiled, vocab, walks, reuse);
        const auto& t = timings.steps;
        all.insert(all.end(), t.begin(), t.end());
        const std::string name = schema.substr(schema.find_last_of('/') + 1);
        const std::string unfinished =
            timings.unfinished ? " (" + std::to_string(timings.unfinished) + " unfinished)" : "";
        std::printf("| %s | %.2f ms | %zu%s | %.1f µs | %.1f µs | %.1f µs | %.1f µs |\n",
                    name.c_str(), compile_us / 1000, t.size(), unfinished.c_str(), mean(t),
                    percentile(t, 0.5), percentile(t, 0.99), percentile(t, 1.0));
      }
      std::printf("| all | | %zu | %.1f µs | %.1f µs | %.1f µs | %.1f µs |\n", all.size(),
                  mean(all), percentile(all, 0.5), percentile(all, 0.99), percentile(all, 1.0));
    }
  } catch (const std::exception& error) {
    std::cerr << "quire-grammar-bench: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
