#pragma once

#include <stdexcept>
#include <string>

namespace quire::engine {

// Input the engine cannot use: a broken or incomplete model directory, a
// truncated or inconsistent safetensors file, a configuration it cannot run.
// The message names the file or setting, what is wrong, and what to do; the
// command line turns it into exit status 2, the application into a message.
class ModelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace quire::engine
