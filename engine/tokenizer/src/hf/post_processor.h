#pragma once

#include <cstdint>
#include <vector>

#include "json_field.h"

namespace quire::engine::detail {

// tokenizer.json's "post_processor", reduced to what it does to one
// sequence's ids when special tokens are asked for: ids before and after it
// (TemplateProcessing's "single", RobertaProcessing's and BertProcessing's
// cls/sep). ByteLevel only adjusts offsets, which Quire does not track.
struct PostProcessor {
  std::vector<std::int32_t> before;
  std::vector<std::int32_t> after;

  void apply(std::vector<std::int32_t>& ids) const;
};

// Throws ModelError for an unknown type or a template that names a special
// token it does not define.
PostProcessor read_post_processor(const JsonField& config);

}  // namespace quire::engine::detail
