#pragma once

// The CUDA backend's device list, as --devices and QUIRE_CUDA_DEVICES write
// it. Parsed here, without CUDA, so that the application can check a list
// before it opens the plugin and the tests can check the grammar anywhere.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace quire::kernels {

// One logical device of the CUDA backend: a whole GPU, or a budgeted share of
// one, so that one GPU can stand in for several (multi-device placement tested
// on a single card).
struct CudaLogicalDevice {
  int gpu = 0;                    // the CUDA runtime's device index
  std::int64_t budget_bytes = 0;  // 0: the whole GPU, its memory read live
  bool operator==(const CudaLogicalDevice&) const = default;
};

struct CudaDeviceSpec {
  bool all_gpus = false;                   // "cuda": every GPU, one logical device each
  std::vector<CudaLogicalDevice> devices;  // otherwise: these, in this order
  bool operator==(const CudaDeviceSpec&) const = default;
};

// "cuda" (every GPU), "cuda:0,2" (GPUs 0 and 2), "cuda:0:20GiB" (GPU 0 with a
// 20 GiB budget), "cuda:0:2x20GiB" (GPU 0 as two logical devices of 20 GiB
// each), and lists of these ("cuda:0:10GiB,1"). Sizes as parse_memory_size
// reads them. A GPU may be named more than once only when every mention has a
// budget: two unbudgeted devices on one GPU would both claim all of it.
// Throws std::invalid_argument with the reason and an example.
CudaDeviceSpec parse_cuda_devices(std::string_view spec);

// The spec written back in the form parse_cuda_devices reads.
std::string to_string(const CudaDeviceSpec& spec);

// The logical devices of `spec` on a machine with `gpu_count` GPUs. Throws
// std::invalid_argument when it names a GPU the machine does not have, or
// when it asks for every GPU and there is none.
std::vector<CudaLogicalDevice> resolve_cuda_devices(const CudaDeviceSpec& spec, int gpu_count);

}  // namespace quire::kernels
