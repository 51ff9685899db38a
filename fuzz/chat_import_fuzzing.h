#pragma once

// What the importers' fuzz targets share: read the bytes as one format, and
// check what comes back is a tree the store can take.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "quire/importers/foreign_chats.h"

namespace quire::importers::fuzzing {

inline void read_as(const std::uint8_t* data, std::size_t size, ForeignFormat format) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)detect_foreign_format(bytes);
  try {
    for (const ForeignChat& chat : read_foreign_chats(bytes, format)) {
      for (std::size_t i = 0; i < chat.messages.size(); ++i) {
        const ForeignMessage& message = chat.messages[i];
        if (message.parent && *message.parent >= i) __builtin_trap();
        if (message.role != "system" && message.role != "user" && message.role != "assistant" &&
            message.role != "tool") {
          __builtin_trap();
        }
      }
      if (chat.current && *chat.current >= chat.messages.size()) __builtin_trap();
    }
  } catch (const ImportError& error) {
    if (std::string_view(error.what()).empty()) __builtin_trap();
  }
}

}  // namespace quire::importers::fuzzing
