#include "post_processor.h"

namespace quire::engine::detail {
namespace {

std::vector<std::int32_t> special_token_ids(const JsonField& special_tokens,
                                            const std::string& name, const JsonField& item) {
  const auto token = special_tokens.find(name);
  if (!token) item.fail("names the special token \"" + name + "\", which \"special_tokens\" lacks");
  const JsonField ids = token->at("ids");
  std::vector<std::int32_t> result;
  for (std::size_t i = 0; i < ids.size(); ++i)
    result.push_back(static_cast<std::int32_t>(ids.at(i).integer(0, 16'777'215)));
  return result;
}

void read_into(const JsonField& config, PostProcessor& out) {
  const std::string type = config.type();
  if (type == "TemplateProcessing") {
    const JsonField single = config.at("single");
    const auto special_tokens = config.find("special_tokens");
    bool seen_sequence = false;
    for (std::size_t i = 0; i < single.size(); ++i) {
      const JsonField item = single.at(i);
      if (const auto token = item.find("SpecialToken")) {
        if (!special_tokens) token->fail("needs \"special_tokens\" beside the template");
        const auto ids = special_token_ids(*special_tokens, token->at("id").string(), *token);
        auto& target = seen_sequence ? out.after : out.before;
        target.insert(target.end(), ids.begin(), ids.end());
      } else if (const auto sequence = item.find("Sequence")) {
        if (seen_sequence) sequence->fail_unsupported("repeats the sequence");
        seen_sequence = true;
      } else {
        item.fail("must hold \"SpecialToken\" or \"Sequence\"");
      }
    }
    if (!seen_sequence) single.fail("has no \"Sequence\"; the text would be dropped");
    return;
  }
  if (type == "RobertaProcessing" || type == "BertProcessing") {
    // "cls": ["<s>", 0], "sep": ["</s>", 2]
    auto id_of = [&](const char* key) {
      const JsonField pair = config.at(key);
      if (pair.size() != 2) pair.fail("must be a token and its id");
      return static_cast<std::int32_t>(pair.at(1).integer(0, 16'777'215));
    };
    out.before.push_back(id_of("cls"));
    out.after.push_back(id_of("sep"));
    return;
  }
  if (type == "ByteLevel") return;
  if (type == "Sequence") {
    const JsonField list = config.at("processors");
    for (std::size_t i = 0; i < list.size(); ++i)
      if (!list.at(i).is_null()) read_into(list.at(i), out);
    return;
  }
  config.fail_unsupported("is a post-processor of type \"" + type +
                          "\", which Quire does not read (it reads TemplateProcessing, ByteLevel, "
                          "RobertaProcessing, BertProcessing and Sequence)");
}

}  // namespace

void PostProcessor::apply(std::vector<std::int32_t>& ids) const {
  ids.insert(ids.begin(), before.begin(), before.end());
  ids.insert(ids.end(), after.begin(), after.end());
}

PostProcessor read_post_processor(const JsonField& config) {
  PostProcessor processor;
  if (!config.is_null()) read_into(config, processor);
  return processor;
}

}  // namespace quire::engine::detail
