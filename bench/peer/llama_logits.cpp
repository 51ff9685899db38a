// llama-logits: runs a list of token ids through a GGUF model with llama.cpp
// in one batch and prints the logits of every position as JSON, in the shape
// `quire-cli logits DIR --tokens ... --all` prints them, so the two can be
// compared number by number.
//
//   llama-logits MODEL.gguf 1,5,9,... [THREADS]
//   llama-logits --version     the versions the libraries report, as JSON
//
// Built by bench/peer/tools.sh against the prebuilt llama.cpp libraries.

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "build-info.h"
#include "ggml.h"
#include "llama.h"

namespace {

std::vector<llama_token> parse_tokens(const std::string& text) {
  std::vector<llama_token> tokens;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    tokens.push_back(static_cast<llama_token>(std::stol(text.substr(start, comma - start))));
    start = comma + 1;
  }
  return tokens;
}

// Only errors: the model loader's report would bury the JSON on a terminal.
void quiet_log(ggml_log_level level, const char* text, void*) {
  if (level == GGML_LOG_LEVEL_ERROR) std::fputs(text, stderr);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--version") {
    // libllama's version, the build number and commit compiled into
    // libllama-common, and ggml's own version and commit.
    std::printf(
        "{\"llama_version\": \"%s\", \"build_number\": %d, \"commit\": \"%s\", "
        "\"ggml_version\": \"%s\", \"ggml_commit\": \"%s\"}\n",
        llama_version(), llama_build_number(), llama_commit(), ggml_version(), ggml_commit());
    return 0;
  }
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODEL.gguf TOKEN,TOKEN,... [THREADS]\n", argv[0]);
    return 2;
  }
  const std::vector<llama_token> tokens = parse_tokens(argv[2]);
  const int threads = argc > 3 ? std::atoi(argv[3]) : 2;
  if (tokens.empty()) {
    std::fprintf(stderr, "llama-logits: no tokens\n");
    return 2;
  }

  llama_log_set(quiet_log, nullptr);
  ggml_backend_load_all();
  llama_backend_init();
  llama_model* model = llama_model_load_from_file(argv[1], llama_model_default_params());
  if (model == nullptr) {
    std::fprintf(stderr, "llama-logits: cannot load %s\n", argv[1]);
    return 1;
  }
  const int vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
  for (const llama_token token : tokens) {
    if (token < 0 || token >= vocab) {
      std::fprintf(stderr, "llama-logits: token %d outside the vocabulary of %d\n", token, vocab);
      return 2;
    }
  }

  llama_context_params params = llama_context_default_params();
  params.n_ctx = static_cast<uint32_t>(tokens.size()) + 16;
  params.n_batch = params.n_ctx;
  params.n_ubatch = params.n_ctx;
  params.n_threads = threads;
  params.n_threads_batch = threads;
  llama_context* context = llama_init_from_model(model, params);
  if (context == nullptr) {
    std::fprintf(stderr, "llama-logits: cannot create a context\n");
    return 1;
  }

  const int count = static_cast<int>(tokens.size());
  llama_batch batch = llama_batch_init(count, 0, 1);
  for (int i = 0; i < count; ++i) {
    batch.token[i] = tokens[static_cast<std::size_t>(i)];
    batch.pos[i] = i;
    batch.n_seq_id[i] = 1;
    batch.seq_id[i][0] = 0;
    batch.logits[i] = 1;
  }
  batch.n_tokens = count;
  if (llama_decode(context, batch) != 0) {
    std::fprintf(stderr, "llama-logits: llama_decode failed\n");
    return 1;
  }

  std::printf("{\"logits\": [");
  for (int row = 0; row < count; ++row) {
    const float* logits = llama_get_logits_ith(context, row);
    std::printf(row ? ", [" : "[");
    for (int i = 0; i < vocab; ++i)
      std::printf(i ? ", %.9g" : "%.9g", static_cast<double>(logits[i]));
    std::printf("]");
  }
  std::printf("]}\n");

  llama_batch_free(batch);
  llama_free(context);
  llama_model_free(model);
  llama_backend_free();
  return 0;
}
