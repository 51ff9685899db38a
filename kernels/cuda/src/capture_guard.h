#pragma once

// Whether this thread is recording work into a CUDA graph
// (CudaBackend::begin_capture). While it is, calls that allocate, free or
// wait for the device would invalidate the capture (or, for cudaFree of a
// buffer a recorded op uses, break the graph), so the backend refuses them
// first, with a message naming the operation, and leaves its state as it was.

namespace quire::kernels::cuda {

bool capturing_on_this_thread();

// Throws CudaError for `operation` when this thread is capturing.
void refuse_while_capturing(const char* operation);

}  // namespace quire::kernels::cuda
