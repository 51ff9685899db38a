#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "quire/kernels/backend.h"

namespace quire::kernels {

struct LoadedBackend {
  std::unique_ptr<Backend> backend;  // null when the backend cannot run here
  std::string why_not;               // then: why, in words a user can act on
  // The library file that was opened (also when its backend declined), so
  // that a check of its results can be tied to this very file; empty when
  // none was found.
  std::filesystem::path library;
};

// Opens the CUDA backend library (libquire_cuda.so) and starts its backend
// over `devices`, a device list as parse_cuda_devices (cuda_devices.h) reads
// it: "cuda" for every GPU, "cuda:0:2x20GiB" for two budgeted logical devices
// on GPU 0. Throws std::invalid_argument for a list that does not parse: that
// is a mistake in what the user wrote. Never throws for a missing driver, GPU
// or library, or a list naming a GPU the machine lacks: that is the ordinary
// state of many machines, and the answer says which one it is. Looks in:
//   1. $QUIRE_CUDA_LIBRARY when set (and only there);
//   2. <directory of the executable>/../<libdir>/quire/, where it is installed;
//   3. the build tree that this program was built in.
// The library stays loaded for the rest of the process, so the backend (and
// any buffer it handed out) may live as long as its owner wants.
LoadedBackend load_cuda_backend(std::string_view devices);
// Every GPU: load_cuda_backend("cuda").
LoadedBackend load_cuda_backend();

}  // namespace quire::kernels
