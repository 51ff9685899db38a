#pragma once

#include <stdexcept>

namespace quire::hub {

// The cache could not be changed as asked (a file that cannot be deleted, a
// folder that is a link out of the cache); the message names the path and
// why.
class HubError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What the Hub sent could not be read, or a name it gave would leave the
// cache; the message says which answer or name and why.
class HubProtocolError : public HubError {
 public:
  using HubError::HubError;
};

}  // namespace quire::hub
