#pragma once

#include <cstddef>

#include "quire/kernels/backend.h"

// The contract between Quire and a backend built as a shared library that is
// opened at run time (today the CUDA backend, libquire_cuda.so). The library
// exports one C function; C linkage keeps the symbol name plain, and the
// function lets no exception out, since unwinding across dlsym's boundary is
// not something to rely on.

namespace quire::kernels {

// Raised whenever Backend, DeviceBuffer or the types they carry change in a
// way that breaks a plugin built against the old headers, so an old library
// left on disk declines instead of crashing.
// Interface 3: Backend's capture of work (begin_capture and the rest).
// Interface 4: Backend::top_logits and gather_logits (sampling candidates).
// Interface 5: Backend::version and DeviceInfo::architecture (the self-check).
// Interface 6: gated_activation, soft_cap, scale, copy_columns, gather_rows, scatter_add_rows and
// attention soft-capping.
// Interface 7: LinearWeight's FP8 format (Fp8Weight) and DType::F8_E4M3.
// Interface 9: GptqWeight's bits, scale dtype and symmetric form (no qzeros);
// DType::I64 and DType::I8.
inline constexpr int kBackendPluginAbi = 9;

inline constexpr const char* kCudaPluginEntry = "quire_cuda_create_backend";

// Returns a new backend over `devices` (a device list as parse_cuda_devices
// in cuda_devices.h reads it, NUL-terminated) that the caller owns and
// deletes, or nullptr after writing why it cannot run (NUL-terminated, cut to
// fit) into `why_not`.
//
// Interface 2 added `devices`. It comes last so that `why_not` and `capacity`
// stay where interface 1 had them: a library of interface 1 ignores the extra
// argument, sees the other number and declines in words, as intended.
using CreateBackendFunction = Backend* (*)(int abi, char* why_not, std::size_t capacity,
                                           const char* devices);

}  // namespace quire::kernels
