#pragma once

// The tool-call parts of real chat templates, by family, for detection
// tests (kept out of the Qt Test sources: moc cannot read these raw strings).

#include <vector>

namespace quire::test {

struct TemplateExcerpt {
  const char* name;
  const char* source;
  const char* format;  // to_string(ToolCallFormat)
};

const std::vector<TemplateExcerpt>& template_excerpts();

}  // namespace quire::test
