#pragma once

// Shared by the template suites: building contexts from JSON, a fixed clock,
// and running Python's jinja2 (tests/reference/render_chat_template.py) on a
// batch of requests to compare with.

#include <QString>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "quire/engine/template/template.h"

namespace quire::test {

using OrderedJson = nlohmann::ordered_json;

// The JSON object's members as template globals; strings are literal when asked.
std::map<std::string, engine::jinja::Value> globals_from_json(const OrderedJson& context,
                                                              bool literal);

// Options whose clock reads `iso` ("2026-11-25T12:00:00") in local time, as
// the reference script's naive datetime does.
engine::jinja::RenderOptions options_at(const std::string& iso);

// Renders, returning the text, or "ERROR: <what>" when the template throws.
std::string render_or_error(const std::string& source, const OrderedJson& context,
                            const engine::jinja::RenderOptions& options);

QString reference_dir();

// Runs the reference renderer on a JSON array of requests; on failure returns
// a null JSON and sets `problem` to a message saying what to do.
OrderedJson render_with_python(const OrderedJson& requests, QString& problem);

}  // namespace quire::test
