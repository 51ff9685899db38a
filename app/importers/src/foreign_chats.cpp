#include "quire/importers/foreign_chats.h"

#include "foreign_tree.h"

namespace quire::importers {
namespace {

using detail::Json;

bool has_member(const Json& value, const char* key) {
  return value.is_object() && value.contains(key);
}

// Recognised by the first conversation: the export's shape, not its name
// (files get renamed when shared).
std::optional<ForeignFormat> format_of(const Json& root) {
  const Json* first = &root;
  if (root.is_array()) {
    if (root.empty()) return std::nullopt;
    first = &root[0];
  }
  if (has_member(*first, "mapping")) return ForeignFormat::ChatGpt;
  if (has_member(*first, "chat") && (*first)["chat"].is_object()) return ForeignFormat::OpenWebUi;
  if (root.is_object() && has_member(root, "messages") && root["messages"].is_array()) {
    const Json& messages = root["messages"];
    // An empty conversation says it is LM Studio's by its creation time
    // (an OpenAI request has "messages" too).
    if (messages.empty() ? has_member(root, "createdAt") : has_member(messages[0], "versions"))
      return ForeignFormat::LmStudio;
  }
  return std::nullopt;
}

}  // namespace

const char* format_name(ForeignFormat format) {
  switch (format) {
    case ForeignFormat::ChatGpt:
      return "ChatGPT export";
    case ForeignFormat::OpenWebUi:
      return "Open WebUI export";
    case ForeignFormat::LmStudio:
      return "LM Studio conversation";
  }
  return "";
}

std::optional<ForeignFormat> detect_foreign_format(std::string_view json) {
  const Json root = Json::parse(json.begin(), json.end(), nullptr, false);
  if (root.is_discarded()) return std::nullopt;
  return format_of(root);
}

std::vector<ForeignChat> read_foreign_chats(std::string_view json, ForeignFormat format) {
  const Json root = detail::parse_json(json);
  if (!root.is_array() && !root.is_object()) {
    throw ImportError(std::string("expected a JSON ") +
                      (format == ForeignFormat::LmStudio ? "object" : "list of conversations") +
                      ", not " + detail::type_words(root));
  }
  if (format_of(root) != format) {
    throw ImportError(std::string("this is not a ") + format_name(format));
  }
  switch (format) {
    case ForeignFormat::ChatGpt:
      return detail::read_chatgpt_export(root);
    case ForeignFormat::OpenWebUi:
      return detail::read_open_webui_export(root);
    case ForeignFormat::LmStudio:
      return detail::read_lm_studio_conversation(root);
  }
  return {};
}

}  // namespace quire::importers
