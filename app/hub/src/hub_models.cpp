#include "quire/hub/hub_models.h"

#include <nlohmann/json.hpp>

#include "quire/hub/hub_error.h"

namespace quire::hub {
namespace {

using HubJson = nlohmann::json;

HubJson parse_answer(std::string_view text, const char* what) {
  HubJson value = HubJson::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded())
    throw HubProtocolError(std::string("The Hub's ") + what + " is not JSON.");
  return value;
}

std::string string_field(const HubJson& object, const char* key) {
  const auto found = object.find(key);
  if (found == object.end() || found->is_null()) return {};
  if (!found->is_string())
    throw HubProtocolError(std::string("The Hub's field \"") + key + "\" is not a string.");
  return found->get<std::string>();
}

std::int64_t integer_field(const HubJson& object, const char* key, std::int64_t fallback) {
  const auto found = object.find(key);
  if (found == object.end() || found->is_null()) return fallback;
  if (!found->is_number_integer() && !found->is_number_unsigned())
    throw HubProtocolError(std::string("The Hub's field \"") + key + "\" is not an integer.");
  return found->get<std::int64_t>();
}

const HubJson& require_object(const HubJson& value, const char* what) {
  if (!value.is_object())
    throw HubProtocolError(std::string("The Hub's ") + what + " is not a JSON object.");
  return value;
}

const HubJson& require_array(const HubJson& value, const char* what) {
  if (!value.is_array())
    throw HubProtocolError(std::string("The Hub's ") + what + " is not a JSON array.");
  return value;
}

// "gated" is false, or the kind of approval: "auto", "manual" (true in old answers).
std::string gated_of(const HubJson& object) {
  const auto found = object.find("gated");
  if (found == object.end() || found->is_null()) return {};
  if (found->is_boolean()) return found->get<bool>() ? "true" : "";
  if (found->is_string()) return found->get<std::string>();
  throw HubProtocolError("The Hub's field \"gated\" is neither a boolean nor a string.");
}

ModelSummary summary_of(const HubJson& item) {
  require_object(item, "model entry");
  ModelSummary model;
  // Search results carry "id" and "modelId"; some carry only "modelId".
  model.id = string_field(item, "id");
  if (model.id.empty()) model.id = string_field(item, "modelId");
  if (model.id.empty()) throw HubProtocolError("A model in the Hub's answer has no id.");
  model.author = string_field(item, "author");
  model.downloads = integer_field(item, "downloads", 0);
  model.likes = integer_field(item, "likes", 0);
  model.last_modified = string_field(item, "lastModified");
  model.pipeline_tag = string_field(item, "pipeline_tag");
  model.library_name = string_field(item, "library_name");
  model.gated = gated_of(item);
  const auto is_private = item.find("private");
  model.is_private =
      is_private != item.end() && is_private->is_boolean() && is_private->get<bool>();
  if (const auto tags = item.find("tags"); tags != item.end() && !tags->is_null()) {
    for (const HubJson& tag : require_array(*tags, "tag list"))
      if (tag.is_string()) model.tags.push_back(tag.get<std::string>());
  }
  return model;
}

std::optional<LfsPointer> lfs_of(const HubJson& object, const char* hash_key) {
  const auto found = object.find("lfs");
  if (found == object.end() || found->is_null()) return std::nullopt;
  require_object(*found, "LFS pointer");
  LfsPointer lfs;
  lfs.sha256 = string_field(*found, hash_key);
  lfs.size = integer_field(*found, "size", -1);
  if (lfs.sha256.empty())
    throw HubProtocolError(std::string("An LFS pointer in the Hub's answer has no ") + hash_key +
                           ".");
  return lfs;
}

std::vector<GitRef> refs_of(const HubJson& object, const char* key) {
  std::vector<GitRef> refs;
  const auto found = object.find(key);
  if (found == object.end() || found->is_null()) return refs;
  for (const HubJson& item : require_array(*found, "ref list")) {
    require_object(item, "ref");
    refs.push_back({string_field(item, "name"), string_field(item, "ref"),
                    string_field(item, "targetCommit")});
  }
  return refs;
}

}  // namespace

std::vector<ModelSummary> parse_model_list(std::string_view json_text) {
  const HubJson answer = parse_answer(json_text, "model list");
  std::vector<ModelSummary> models;
  for (const HubJson& item : require_array(answer, "model list"))
    models.push_back(summary_of(item));
  return models;
}

ModelInfo parse_model_info(std::string_view json_text) {
  const HubJson answer = parse_answer(json_text, "repository info");
  ModelInfo info;
  info.summary = summary_of(require_object(answer, "repository info"));
  info.sha = string_field(answer, "sha");
  if (const auto siblings = answer.find("siblings");
      siblings != answer.end() && !siblings->is_null()) {
    for (const HubJson& item : require_array(*siblings, "file list")) {
      require_object(item, "file entry");
      RepoFile file;
      file.path = string_field(item, "rfilename");
      if (file.path.empty()) throw HubProtocolError("A file in the Hub's answer has no name.");
      file.size = integer_field(item, "size", -1);
      file.blob_id = string_field(item, "blobId");
      file.lfs = lfs_of(item, "sha256");
      info.files.push_back(std::move(file));
    }
  }
  return info;
}

RepoRefs parse_refs(std::string_view json_text) {
  const HubJson answer = parse_answer(json_text, "list of branches and tags");
  require_object(answer, "list of branches and tags");
  return {refs_of(answer, "branches"), refs_of(answer, "tags"), refs_of(answer, "converts")};
}

std::vector<TreeEntry> parse_tree(std::string_view json_text) {
  const HubJson answer = parse_answer(json_text, "file tree");
  std::vector<TreeEntry> entries;
  for (const HubJson& item : require_array(answer, "file tree")) {
    require_object(item, "tree entry");
    TreeEntry entry;
    const std::string type = string_field(item, "type");
    if (type != "file" && type != "directory")
      throw HubProtocolError("A tree entry's type is \"" + type + "\", not file or directory.");
    entry.is_directory = type == "directory";
    entry.path = string_field(item, "path");
    if (entry.path.empty()) throw HubProtocolError("A tree entry has no path.");
    entry.oid = string_field(item, "oid");
    entry.size = integer_field(item, "size", 0);
    entry.lfs = lfs_of(item, "oid");
    entries.push_back(std::move(entry));
  }
  return entries;
}

std::string error_message_of(std::string_view body) {
  const HubJson value =
      HubJson::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (!value.is_object()) return {};
  const auto error = value.find("error");
  if (error == value.end() || !error->is_string()) return {};
  return error->get<std::string>();
}

}  // namespace quire::hub
