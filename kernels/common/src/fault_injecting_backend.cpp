#include "quire/kernels/fault_injecting_backend.h"

#include <charconv>
#include <cstdlib>
#include <stdexcept>

#include "quire/kernels/memory_size.h"

namespace quire::kernels {
namespace {

constexpr std::array<std::string_view, kBackendCallCount> kCallNames = {
    "allocate",         "copy",         "fill_zero",        "synchronize",
    "replay",           "embedding",    "rms_norm",         "linear",
    "linear_many",      "rope",         "gated_activation", "add",
    "soft_cap",         "scale",        "copy_columns",     "gather_rows",
    "scatter_add_rows", "write_kv",     "paged_attention",  "copy_page_tokens",
    "save_page",        "restore_page", "top_logits",       "gather_logits",
    "fill_mirror",
};
static_assert(static_cast<std::size_t>(BackendCall::FillMirror) + 1 == kBackendCallCount);

// What an injected op failure claims the op wanted: a workspace of a size a
// real one reaches in prefill.
constexpr std::int64_t kInjectedWorkspaceBytes = std::int64_t{64} << 20;

std::int64_t positive_number(std::string_view text, std::string_view rule) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 1) {
    throw std::invalid_argument("fault rule \"" + std::string(rule) + "\": \"" + std::string(text) +
                                "\" is not a call number from 1 on");
  }
  return value;
}

std::string trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t");
  return std::string(text.substr(first, last - first + 1));
}

// The call numbers of "N", "N+K" or "N+" into `rule`.
void parse_numbers(std::string_view numbers, std::string_view whole, FaultRule& rule) {
  const auto plus = numbers.find('+');
  rule.first = positive_number(numbers.substr(0, plus), whole);
  if (plus == std::string_view::npos) return;
  const std::string_view count = numbers.substr(plus + 1);
  rule.count = count.empty() ? FaultRule::kEveryCall : positive_number(count, whole);
}

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : trimmed(value);
}

}  // namespace

std::string_view backend_call_name(BackendCall call) {
  return kCallNames.at(static_cast<std::size_t>(call));
}

BackendCall parse_backend_call(std::string_view name) {
  for (std::size_t i = 0; i < kCallNames.size(); ++i) {
    if (kCallNames[i] == name) return static_cast<BackendCall>(i);
  }
  std::string known;
  for (const std::string_view each : kCallNames)
    known += (known.empty() ? "" : ", ") + std::string(each);
  throw std::invalid_argument("no backend call is named \"" + std::string(name) +
                              "\"; the calls are " + known);
}

FaultRule parse_fault_rule(std::string_view text) {
  const std::string whole = trimmed(text);
  const auto colon = whole.find(':');
  if (colon == std::string::npos) {
    throw std::invalid_argument("fault rule \"" + whole +
                                "\" is not name:N, name:N+K or name:N+ (e.g. linear:40)");
  }
  FaultRule rule;
  rule.call = parse_backend_call(std::string_view(whole).substr(0, colon));
  parse_numbers(std::string_view(whole).substr(colon + 1), whole, rule);
  return rule;
}

FaultPlan fault_plan_from_environment() {
  FaultPlan plan;
  const auto named = [](const char* variable, auto parse) {
    try {
      return parse();
    } catch (const std::invalid_argument& error) {
      throw std::invalid_argument(std::string(variable) + ": " + error.what());
    }
  };
  if (const std::string allocation = environment("QUIRE_FAULT_ALLOCATION"); !allocation.empty()) {
    plan.rules.push_back(named("QUIRE_FAULT_ALLOCATION",
                               [&] { return parse_fault_rule("allocate:" + allocation); }));
  }
  const std::string ops = environment("QUIRE_FAULT_OP");
  for (std::size_t begin = 0; begin < ops.size();) {
    std::size_t end = ops.find(',', begin);
    if (end == std::string::npos) end = ops.size();
    const std::string rule = trimmed(std::string_view(ops).substr(begin, end - begin));
    if (!rule.empty()) {
      plan.rules.push_back(named("QUIRE_FAULT_OP", [&] { return parse_fault_rule(rule); }));
    }
    begin = end + 1;
  }
  if (const std::string above = environment("QUIRE_FAULT_ALLOCATIONS_ABOVE"); !above.empty()) {
    plan.allocations_above = static_cast<std::size_t>(
        named("QUIRE_FAULT_ALLOCATIONS_ABOVE", [&] { return parse_memory_size(above); }));
  }
  return plan;
}

FaultInjectingBackend::FaultInjectingBackend(std::unique_ptr<Backend> inner, FaultPlan plan)
    : inner_(std::move(inner)), plan_(std::move(plan)) {
  if (!inner_) throw std::invalid_argument("a fault-injecting backend needs a backend to wrap");
}

void FaultInjectingBackend::set_plan(FaultPlan plan) {
  std::lock_guard lock(mutex_);
  plan_ = std::move(plan);
}

std::int64_t FaultInjectingBackend::calls(BackendCall call) const {
  std::lock_guard lock(mutex_);
  return calls_.at(static_cast<std::size_t>(call));
}

std::int64_t FaultInjectingBackend::faults() const {
  std::lock_guard lock(mutex_);
  return faults_;
}

void FaultInjectingBackend::reset_counters() {
  std::lock_guard lock(mutex_);
  calls_.fill(0);
  faults_ = 0;
}

void FaultInjectingBackend::enter(BackendCall call, int device, std::size_t bytes,
                                  std::string_view purpose) {
  std::lock_guard lock(mutex_);
  const std::int64_t number = ++calls_.at(static_cast<std::size_t>(call));
  bool fails = false;
  for (const FaultRule& rule : plan_.rules) {
    if (rule.call == call && number >= rule.first && number - rule.first < rule.count) fails = true;
  }
  const bool too_large =
      call == BackendCall::Allocate && plan_.allocations_above && bytes > *plan_.allocations_above;
  if (!fails && !too_large) return;
  ++faults_;
  if (call == BackendCall::Allocate) {
    const std::int64_t available =
        too_large ? static_cast<std::int64_t>(*plan_.allocations_above) : 0;
    throw DeviceOutOfMemory(device, static_cast<std::int64_t>(bytes), available,
                            std::string(purpose) + " (injected fault)");
  }
  throw DeviceOutOfMemory(device, kInjectedWorkspaceBytes, 0,
                          std::string(backend_call_name(call)) + " workspace (injected fault)");
}

DeviceBuffer FaultInjectingBackend::allocate(int device, std::size_t bytes,
                                             std::string_view purpose) {
  enter(BackendCall::Allocate, device, bytes, purpose);
  return inner_->allocate(device, bytes, purpose);
}

void FaultInjectingBackend::copy(void* destination, int destination_device, const void* source,
                                 int source_device, std::size_t bytes) {
  enter(BackendCall::Copy, destination_device >= 0 ? destination_device : source_device);
  inner_->copy(destination, destination_device, source, source_device, bytes);
}

void FaultInjectingBackend::fill_zero(int device, void* data, std::size_t bytes) {
  enter(BackendCall::FillZero, device);
  inner_->fill_zero(device, data, bytes);
}

void FaultInjectingBackend::synchronize(int device) {
  enter(BackendCall::Synchronize, device);
  inner_->synchronize(device);
}

bool FaultInjectingBackend::replay(int device, CapturedWork& work) {
  enter(BackendCall::Replay, device);
  return inner_->replay(device, work);
}

void FaultInjectingBackend::embedding(int device, const DenseWeight& table, std::int64_t vocab,
                                      std::int64_t hidden, const std::int32_t* tokens,
                                      std::int64_t count, float* out) {
  enter(BackendCall::Embedding, device);
  inner_->embedding(device, table, vocab, hidden, tokens, count, out);
}

void FaultInjectingBackend::rms_norm(int device, const float* x, const DenseWeight& weight,
                                     float eps, std::int64_t rows, std::int64_t cols, float* out) {
  enter(BackendCall::RmsNorm, device);
  inner_->rms_norm(device, x, weight, eps, rows, cols, out);
}

void FaultInjectingBackend::linear(int device, const float* x, std::int64_t rows,
                                   const LinearWeight& weight, float* out, ProductRows kind) {
  enter(BackendCall::Linear, device);
  inner_->linear(device, x, rows, weight, out, kind);
}

void FaultInjectingBackend::linear_many(int device, const float* x, std::int64_t rows,
                                        std::span<const LinearWeight* const> weights,
                                        std::span<float* const> outs, ProductRows kind) {
  enter(BackendCall::LinearMany, device);
  inner_->linear_many(device, x, rows, weights, outs, kind);
}

void FaultInjectingBackend::rope(int device, float* x, std::int64_t tokens, int heads, int head_dim,
                                 const std::int32_t* positions, const RopeParams& rope) {
  enter(BackendCall::Rope, device);
  inner_->rope(device, x, tokens, heads, head_dim, positions, rope);
}

void FaultInjectingBackend::gated_activation(int device, GatedActivation activation,
                                             const float* gate, const float* up, std::int64_t count,
                                             float* out) {
  enter(BackendCall::GatedActivation, device);
  inner_->gated_activation(device, activation, gate, up, count, out);
}

void FaultInjectingBackend::add(int device, float* x, const float* y, std::int64_t count) {
  enter(BackendCall::Add, device);
  inner_->add(device, x, y, count);
}

void FaultInjectingBackend::soft_cap(int device, float* x, std::int64_t count, float cap) {
  enter(BackendCall::SoftCap, device);
  inner_->soft_cap(device, x, count, cap);
}

void FaultInjectingBackend::scale(int device, float* x, std::int64_t count, float factor) {
  enter(BackendCall::Scale, device);
  inner_->scale(device, x, count, factor);
}

void FaultInjectingBackend::copy_columns(int device, const float* x, std::int64_t rows,
                                         std::int64_t width, std::int64_t first, std::int64_t cols,
                                         float* out) {
  enter(BackendCall::CopyColumns, device);
  inner_->copy_columns(device, x, rows, width, first, cols, out);
}

void FaultInjectingBackend::gather_rows(int device, const float* x, std::int64_t cols,
                                        const std::int32_t* rows, std::int64_t count, float* out) {
  enter(BackendCall::GatherRows, device);
  inner_->gather_rows(device, x, cols, rows, count, out);
}

void FaultInjectingBackend::scatter_add_rows(int device, float* x, std::int64_t cols,
                                             const float* y, const std::int32_t* rows,
                                             const float* weights, std::int64_t count) {
  enter(BackendCall::ScatterAddRows, device);
  inner_->scatter_add_rows(device, x, cols, y, rows, weights, count);
}

void FaultInjectingBackend::write_kv(int device, const KvLayerView& layer, const TokenBatch& batch,
                                     const float* key, const float* value) {
  enter(BackendCall::WriteKv, device);
  inner_->write_kv(device, layer, batch, key, value);
}

void FaultInjectingBackend::paged_attention(int device, const KvLayerView& layer,
                                            const TokenBatch& batch, const float* query,
                                            const AttentionParams& params, float* out) {
  enter(BackendCall::PagedAttention, device);
  inner_->paged_attention(device, layer, batch, query, params, out);
}

void FaultInjectingBackend::copy_page_tokens(int device, const KvLayerView& layer, int source,
                                             int destination, int tokens) {
  enter(BackendCall::CopyPageTokens, device);
  inner_->copy_page_tokens(device, layer, source, destination, tokens);
}

void FaultInjectingBackend::fill_mirror(int device, const KvLayerView& layer, int page, int slot,
                                        int tokens) {
  enter(BackendCall::FillMirror, device);
  inner_->fill_mirror(device, layer, page, slot, tokens);
}

void FaultInjectingBackend::save_page(int device, const KvLayerView& layer, int page, void* host) {
  enter(BackendCall::SavePage, device);
  inner_->save_page(device, layer, page, host);
}

void FaultInjectingBackend::restore_page(int device, const KvLayerView& layer, int page,
                                         const void* host) {
  enter(BackendCall::RestorePage, device);
  inner_->restore_page(device, layer, page, host);
}

void FaultInjectingBackend::top_logits(int device, const float* logits, std::int64_t rows,
                                       std::int64_t vocab, int k, const float* inv_temperatures,
                                       float* values, std::int32_t* ids, TopLogitsStats* stats) {
  enter(BackendCall::TopLogits, device);
  inner_->top_logits(device, logits, rows, vocab, k, inv_temperatures, values, ids, stats);
}

void FaultInjectingBackend::gather_logits(int device, const float* logits, std::int64_t row_count,
                                          std::int64_t vocab, const std::int32_t* rows,
                                          const std::int32_t* ids, std::int64_t count, float* out) {
  enter(BackendCall::GatherLogits, device);
  inner_->gather_logits(device, logits, row_count, vocab, rows, ids, count, out);
}

}  // namespace quire::kernels
