#pragma once

// Whether the client of a request still being answered has gone away.
// cpp-httplib (0.11, Debian 12's) gives a handler no way to see its
// connection, so a whole (non-streamed) reply would otherwise run to its end
// for nobody. The probe finds the request's socket among the process's open
// files by its two addresses, as the library reported them, and polls it
// without reading: a close of the client's end or a reset means it left.

#include <string>

namespace quire::server::detail {

class ClientConnection {
 public:
  ClientConnection(std::string local_addr, int local_port, std::string remote_addr,
                   int remote_port);

  // True once the client has closed or reset the connection; false while it
  // is open, and when no open socket has these addresses (nothing to go by).
  bool closed();

  // The open socket with these addresses, or -1.
  int find_socket() const;

 private:
  bool matches(int fd) const;  // an IP socket with these two addresses

  std::string local_addr_;
  int local_port_;
  std::string remote_addr_;
  int remote_port_;
  int fd_ = -1;
};

}  // namespace quire::server::detail
