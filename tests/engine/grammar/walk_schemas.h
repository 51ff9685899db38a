#pragma once

#include <vector>

namespace quire::test {

struct WalkSchema {
  const char* name;
  const char* schema;
};

std::vector<WalkSchema> walk_schemas();

}  // namespace quire::test
