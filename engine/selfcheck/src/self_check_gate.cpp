#include "quire/engine/selfcheck/self_check_gate.h"

#include <cstdlib>
#include <exception>
#include <string_view>

#include "quire/kernels/cpu/cpu_backend.h"

namespace quire::engine::selfcheck {
namespace {

enum class Source { Remembered, RanNow };

std::string problem_line(const std::string& backend, const SelfCheckRecord& record,
                         const SelfCheckStore& store, bool logged, bool completed, Source source) {
  std::string line = "the " + display_name(backend) + " backend ";
  line += completed ? "failed its self-check against the CPU" : "could not complete its self-check";
  if (source == Source::Remembered) line += " on " + record.checked_at;
  line += ": " + record.summary;
  if (logged) line += "; details in " + store.log_file().string();
  return line;
}

}  // namespace

bool skip_requested() {
  const char* value = std::getenv(kSkipVariable);
  return value != nullptr && std::string_view(value) == "1";
}

std::string display_name(const std::string& backend) {
  return backend == "cuda" ? "CUDA" : backend;
}

GateOutcome check_backend_once(kernels::Backend& candidate, SelfCheckStore& store,
                               const GateOptions& options) {
  GateOutcome outcome;
  std::string backend = "backend";
  try {
    backend = candidate.name();
    outcome.record.key = key_for(candidate, options.quire_version, options.library);
  } catch (const std::exception& error) {
    outcome.record.summary = std::string("it cannot describe itself: ") + error.what();
    outcome.problem = problem_line(backend, outcome.record, store, false, false, Source::RanNow);
    return outcome;
  }

  if (!options.force) {
    if (std::optional<SelfCheckRecord> remembered = store.find(outcome.record.key)) {
      outcome.record = std::move(*remembered);
      outcome.passed = outcome.record.passed;
      if (!outcome.passed)
        outcome.problem =
            problem_line(backend, outcome.record, store, true, true, Source::Remembered);
      return outcome;
    }
  }

  kernels::CpuBackend cpu;
  outcome.ran_now = true;
  ComparisonOptions comparison;
  comparison.quire_version = options.quire_version;
  outcome.result = compare_backends(candidate, cpu, comparison);
  outcome.passed = outcome.result.passed;
  outcome.record.passed = outcome.result.passed;
  outcome.record.checked_at = utc_now();
  outcome.record.summary = outcome.result.summary;
  bool logged = false;
  try {
    store.append_log(outcome.result.details);
    logged = true;
    // An incomplete check says nothing about the results: the next start
    // tries again instead of holding on to it.
    if (outcome.result.completed) store.remember(outcome.record);
  } catch (const std::exception& error) {
    outcome.store_error = error.what();
  }
  if (!outcome.passed) {
    outcome.problem = problem_line(backend, outcome.record, store, logged, outcome.result.completed,
                                   Source::RanNow);
  }
  return outcome;
}

}  // namespace quire::engine::selfcheck
