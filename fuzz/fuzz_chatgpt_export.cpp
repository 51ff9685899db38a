// Feeds arbitrary bytes to the reader of ChatGPT's conversations.json.
// ImportError (a message naming the problem) is the expected answer to bad
// input; a crash, a hang, another exception, a sanitizer report, or a tree
// whose parents do not come before their children is a bug.

#include <cstddef>
#include <cstdint>

#include "chat_import_fuzzing.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  quire::importers::fuzzing::read_as(data, size, quire::importers::ForeignFormat::ChatGpt);
  return 0;
}
