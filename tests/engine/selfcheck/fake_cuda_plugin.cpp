// A stand-in for libquire_cuda.so that the tests load through
// QUIRE_CUDA_LIBRARY: the CPU backend named "cuda", on one device called
// "Fake GPU 0" of architecture sm_86, so that the self-check's decisions in
// quire-cli and the desktop application can be tested on any machine.
// QUIRE_FAKE_CUDA_SCALE=1.1 makes its linear layers 10% wrong;
// QUIRE_FAKE_CUDA_VERSION replaces its version (a driver update).

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>

#include "perturbed_backend.h"
#include "quire/kernels/backend_plugin.h"

namespace {

std::string environment(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

void write_reason(const std::string& reason, char* why_not, std::size_t capacity) {
  if (why_not == nullptr || capacity == 0) return;
  const std::size_t length = std::min(reason.size(), capacity - 1);
  std::memcpy(why_not, reason.data(), length);
  why_not[length] = '\0';
}

}  // namespace

extern "C" __attribute__((visibility("default"))) quire::kernels::Backend*
quire_cuda_create_backend(int abi, char* why_not, std::size_t capacity,
                          const char* /*devices*/) noexcept {
  try {
    if (abi != quire::kernels::kBackendPluginAbi) {
      write_reason("the fake CUDA backend was built for another interface", why_not, capacity);
      return nullptr;
    }
    auto backend = std::make_unique<quire::test::PerturbedBackend>(
        std::make_unique<quire::kernels::CpuBackend>());
    backend->backend_name = "cuda";
    backend->version_text = environment("QUIRE_FAKE_CUDA_VERSION", "fake runtime 1.0, driver 1.0");
    backend->faults.linear_scale = std::stof(environment("QUIRE_FAKE_CUDA_SCALE", "1"));
    return backend.release();
  } catch (const std::exception& error) {
    write_reason(error.what(), why_not, capacity);
  }
  return nullptr;
}

[[maybe_unused]] constexpr quire::kernels::CreateBackendFunction kEntryHasTheLoadersType =
    &quire_cuda_create_backend;
