#pragma once

#include <stdexcept>

namespace quire::hub {

// What the Hub sent could not be read, or a name it gave would leave the
// cache; the message says which answer or name and why.
class HubProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace quire::hub
