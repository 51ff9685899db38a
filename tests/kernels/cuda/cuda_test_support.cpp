#include "cuda_test_support.h"

#include <QRandomGenerator>
#include <algorithm>
#include <string>

#include "quire/kernels/cuda_loader.h"

namespace quire::test {

std::unique_ptr<kernels::Backend> start_cuda_backend(std::mt19937& rng, QString& why_not) {
  kernels::LoadedBackend loaded = kernels::load_cuda_backend();
  if (!loaded.backend) {
    why_not = QString::fromStdString("no CUDA backend here: " + loaded.why_not);
    return nullptr;
  }
  const std::uint32_t seed = QRandomGenerator::system()->generate();
  qInfo("random seed %u", seed);
  rng.seed(seed);
  return std::move(loaded.backend);
}

kernels::DeviceBuffer upload_raw(kernels::Backend& gpu, const void* host, std::size_t bytes) {
  kernels::DeviceBuffer buffer =
      gpu.allocate(kCudaTestDevice, std::max<std::size_t>(bytes, 1), "test data");
  if (bytes > 0) gpu.copy(buffer.data(), kCudaTestDevice, host, -1, bytes);
  return buffer;
}

std::vector<float> download_floats(kernels::Backend& gpu, const kernels::DeviceBuffer& buffer,
                                   std::size_t count) {
  gpu.synchronize(kCudaTestDevice);
  std::vector<float> host(count);
  gpu.copy(host.data(), -1, buffer.data(), kCudaTestDevice, count * sizeof(float));
  return host;
}

}  // namespace quire::test
