#include "client_connection.h"

#include <dirent.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include <charconv>
#include <cstring>
#include <utility>

namespace quire::server::detail {
namespace {

struct Address {
  std::string host;
  int port = -1;
};

// Numeric host and port, as cpp-httplib writes a request's addresses
// (getnameinfo with NI_NUMERICHOST), so that the two compare as text.
bool numeric(const sockaddr_storage& address, socklen_t size, Address& out) {
  char host[NI_MAXHOST];
  char port[NI_MAXSERV];
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&address), size, host, sizeof host, port,
                    sizeof port, NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return false;
  }
  out.host = host;
  return std::from_chars(port, port + std::strlen(port), out.port).ec == std::errc{};
}

bool local_address(int fd, Address& out) {
  sockaddr_storage address{};
  socklen_t size = sizeof address;
  return ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0 &&
         (address.ss_family == AF_INET || address.ss_family == AF_INET6) &&
         numeric(address, size, out);
}

bool peer_address(int fd, Address& out) {
  sockaddr_storage address{};
  socklen_t size = sizeof address;
  return ::getpeername(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0 &&
         numeric(address, size, out);
}

}  // namespace

ClientConnection::ClientConnection(std::string local_addr, int local_port, std::string remote_addr,
                                   int remote_port)
    : local_addr_(std::move(local_addr)),
      local_port_(local_port),
      remote_addr_(std::move(remote_addr)),
      remote_port_(remote_port) {}

bool ClientConnection::matches(int fd) const {
  Address local;
  Address peer;
  return local_address(fd, local) && local.port == local_port_ && local.host == local_addr_ &&
         peer_address(fd, peer) && peer.port == remote_port_ && peer.host == remote_addr_;
}

int ClientConnection::find_socket() const {
  DIR* directory = ::opendir("/proc/self/fd");
  if (directory == nullptr) return -1;
  int found = -1;
  while (const dirent* entry = ::readdir(directory)) {
    int fd = -1;
    const char* name = entry->d_name;
    if (std::from_chars(name, name + std::strlen(name), fd).ec != std::errc{}) continue;
    if (fd != ::dirfd(directory) && matches(fd)) {
      found = fd;
      break;
    }
  }
  ::closedir(directory);
  return found;
}

bool ClientConnection::closed() {
  // The library closes the socket only after the handler returns, so a
  // number found once stays this connection's while the handler asks.
  if (fd_ < 0) fd_ = find_socket();
  if (fd_ < 0) return false;
  // POLLRDHUP: the client has closed its end, even with bytes still unread
  // before its close; POLLERR and POLLHUP: it reset the connection.
  pollfd entry{fd_, POLLRDHUP, 0};
  return ::poll(&entry, 1, 0) == 1 && (entry.revents & (POLLRDHUP | POLLERR | POLLHUP)) != 0;
}

}  // namespace quire::server::detail
