#pragma once

// The version and the commit this program was built from. They live in one
// generated source file (build_info.cpp.in), so that a new commit recompiles
// that file alone and every other object stays in the compiler cache.

namespace quire::gui {

const char* build_version();  // "0.1.0"
const char* build_commit();   // "3f2a9c1", or "unknown" outside a git checkout

}  // namespace quire::gui
