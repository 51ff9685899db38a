// The CUDA backend's self-check (engine/selfcheck) wired to quire-cli's
// version and the user's cache folder.

#include "cuda_self_check.h"

namespace quire::cli {

engine::selfcheck::SelfCheckStore cuda_self_check_store() {
  return engine::selfcheck::SelfCheckStore(engine::selfcheck::SelfCheckStore::default_folder(),
                                           "cuda");
}

engine::selfcheck::GateOutcome check_cuda(const kernels::LoadedBackend& cuda, bool force) {
  engine::selfcheck::SelfCheckStore store = cuda_self_check_store();
  engine::selfcheck::GateOptions options;
  options.quire_version = QUIRE_VERSION;
  options.library = cuda.library;
  options.force = force;
  return engine::selfcheck::check_backend_once(*cuda.backend, store, options);
}

std::optional<engine::selfcheck::SelfCheckRecord> remembered_cuda_check(
    const kernels::LoadedBackend& cuda) {
  return cuda_self_check_store().find(
      engine::selfcheck::key_for(*cuda.backend, QUIRE_VERSION, cuda.library));
}

std::optional<std::string> cuda_self_check_problem(const kernels::LoadedBackend& cuda) {
  if (engine::selfcheck::skip_requested()) return std::nullopt;
  engine::selfcheck::GateOutcome outcome = check_cuda(cuda, false);
  if (outcome.passed) return std::nullopt;
  return std::move(outcome.problem);
}

std::string self_check_override_hint() {
  return std::string("set ") + engine::selfcheck::kSkipVariable +
         "=1 to use the CUDA backend anyway";
}

}  // namespace quire::cli
