#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "quire/engine/template/template.h"

namespace quire::engine::jinja {

// The global functions transformers' environment offers: range, namespace,
// dict, raise_exception and strftime_now (reading options.now). Every
// namespace the template makes is also appended to `namespaces`.
void add_builtins(std::unordered_map<std::string, Value>& globals, const RenderOptions& options,
                  std::vector<Value>& namespaces);

// Python's time.strftime for the codes chat templates use, in the C locale.
std::string python_strftime(const std::string& format, std::chrono::system_clock::time_point now);

}  // namespace quire::engine::jinja
