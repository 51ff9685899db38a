#pragma once

// What the window says about CUDA when "auto" runs on the CPU. A machine
// without any NVIDIA GPU is the ordinary case and gets no word at all; a
// machine with one that cannot be used gets a short sentence in plain words,
// never the CUDA runtime's error names.

#include <QString>
#include <string>

namespace quire::gui {

// Traces an NVIDIA GPU leaves on a Linux machine.
struct NvidiaPresence {
  bool device_nodes = false;    // /dev/nvidia*
  bool driver_library = false;  // libcuda.so.1 can be opened
  bool any() const { return device_nodes || driver_library; }
};

NvidiaPresence probe_nvidia();

// The status bar's note for a fallback to the CPU whose cause the CUDA loader
// gave as `why_not`. Empty when the machine has no NVIDIA GPU and the cause is
// only that (no driver, no GPU, no CUDA backend in this build), unless
// `library_named` (QUIRE_CUDA_LIBRARY chose the library, so whoever set it
// wants to hear what became of it).
QString cuda_fallback_note(const std::string& why_not, const NvidiaPresence& machine,
                           bool library_named);

// The loader's reason without the runtime's error name and code in
// parentheses ("(cudaErrorInsufficientDriver: ...)"), which mean nothing to
// a user.
QString plain_cuda_reason(const std::string& why_not);

}  // namespace quire::gui
