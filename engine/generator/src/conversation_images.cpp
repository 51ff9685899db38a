// Images in a rendered chat template (rendered_images.h), and a
// conversation's use of them.

#include <algorithm>
#include <map>
#include <stdexcept>

#include "quire/engine/generator/conversation.h"
#include "quire/engine/generator/rendered_images.h"

namespace quire::engine {
namespace {

bool inside_literal(const jinja::Rendered& rendered, std::size_t at, std::size_t length) {
  return std::any_of(
      rendered.literal.begin(), rendered.literal.end(),
      [&](const jinja::TextRange& range) { return at < range.end && at + length > range.begin; });
}

// Where the template wrote each image's marker, outside message texts.
std::vector<std::size_t> marker_offsets(
    const jinja::Rendered& rendered, std::span<const std::shared_ptr<const PreparedImage>> images) {
  std::vector<std::size_t> offsets;
  std::size_t from = 0;
  for (const auto& image : images) {
    std::size_t at = rendered.text.find(image->marker, from);
    while (at != std::string::npos && inside_literal(rendered, at, image->marker.size()))
      at = rendered.text.find(image->marker, at + 1);
    if (at == std::string::npos) {
      throw ChatTemplateError("the chat template placed " + std::to_string(offsets.size()) +
                                  " of the conversation's " + std::to_string(images.size()) +
                                  " images (it writes no \"" + image->marker +
                                  "\" for the others); this model's template may not read "
                                  "image parts",
                              0, "image");
    }
    offsets.push_back(at);
    from = at + image->marker.size();
  }
  return offsets;
}

}  // namespace

std::vector<std::shared_ptr<const PreparedImage>> Conversation::images_of(
    std::size_t skip_from, std::size_t skip_to) const {
  std::vector<std::shared_ptr<const PreparedImage>> images;
  for (std::size_t i = 1; i < messages_.size(); ++i) {
    if (i >= skip_from && i < skip_to) continue;
    images.insert(images.end(), messages_[i].images.begin(), messages_[i].images.end());
  }
  return images;
}

std::vector<std::int32_t> encode_rendered_with_images(
    const Tokenizer& tokenizer, const jinja::Rendered& rendered, std::size_t from,
    std::span<const std::shared_ptr<const PreparedImage>> all) {
  if (all.empty()) return encode_rendered(tokenizer, rendered, from);
  const std::vector<std::size_t> offsets = marker_offsets(rendered, all);

  // The text from `from` on with the markers there replaced; message texts'
  // ranges move with what comes before them (no marker lies inside one).
  jinja::Rendered expanded;
  std::vector<std::shared_ptr<const PreparedImage>> placed;
  std::size_t copied = from;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (offsets[i] < from) continue;
    expanded.text.append(rendered.text, copied, offsets[i] - copied);
    expanded.text += all[i]->text;
    copied = offsets[i] + all[i]->marker.size();
    placed.push_back(all[i]);
  }
  expanded.text.append(rendered.text, copied);
  for (const jinja::TextRange& range : rendered.literal) {
    if (range.end <= from) continue;
    std::int64_t shift = -static_cast<std::int64_t>(from);
    for (std::size_t i = 0; i < all.size(); ++i) {
      if (offsets[i] >= from && offsets[i] < range.begin) {
        shift += static_cast<std::int64_t>(all[i]->text.size()) -
                 static_cast<std::int64_t>(all[i]->marker.size());
      }
    }
    const std::size_t begin = std::max(range.begin, from);
    expanded.literal.push_back(
        {std::size_t(std::int64_t(begin) + shift), std::size_t(std::int64_t(range.end) + shift)});
  }
  std::vector<std::int32_t> ids = encode_rendered(tokenizer, expanded, 0);

  // Each run of position tokens, in order, takes its image's ids.
  std::size_t at = 0;
  for (const auto& image : placed) {
    EncodeOptions special;
    special.parse_special = true;
    const std::vector<std::int32_t> position = tokenizer.encode(image->position_text, special);
    if (position.size() != 1) {
      throw std::invalid_argument("the image position text \"" + image->position_text +
                                  "\" is not one token of this model's vocabulary");
    }
    for (const auto& run : image->runs) {
      at = std::size_t(std::find(ids.begin() + std::ptrdiff_t(at), ids.end(), position[0]) -
                       ids.begin());
      const std::size_t end = at + std::size_t(run->positions);
      if (end > ids.size() ||
          !std::all_of(ids.begin() + std::ptrdiff_t(at), ids.begin() + std::ptrdiff_t(end),
                       [&](std::int32_t id) { return id == position[0]; })) {
        throw std::invalid_argument("an image's text did not tokenize into its " +
                                    std::to_string(run->positions) + " positions");
      }
      const std::vector<cache::TokenId> run_ids = image_position_ids(run->digest, run->positions);
      std::copy(run_ids.begin(), run_ids.end(), ids.begin() + std::ptrdiff_t(at));
      at = end;
    }
  }
  return ids;
}

std::vector<PromptImagePlacement> place_prompt_images(
    std::span<const std::int32_t> ids,
    std::span<const std::shared_ptr<const PreparedImage>> images) {
  std::map<cache::TokenId, std::vector<std::shared_ptr<const PromptImage>>> by_first_id;
  for (const auto& image : images) {
    for (const auto& run : image->runs)
      by_first_id[image_position_ids(run->digest, 1).front()].push_back(run);
  }
  std::vector<PromptImagePlacement> placements;
  for (std::size_t i = 0; i < ids.size();) {
    const auto found = by_first_id.find(ids[i]);
    if (found == by_first_id.end()) {
      ++i;
      continue;
    }
    bool placed = false;
    for (const auto& run : found->second) {
      const std::vector<cache::TokenId> run_ids = image_position_ids(run->digest, run->positions);
      if (i + run_ids.size() <= ids.size() &&
          std::equal(run_ids.begin(), run_ids.end(), ids.begin() + std::ptrdiff_t(i))) {
        placements.push_back({static_cast<std::int32_t>(i), run});
        i += run_ids.size();
        placed = true;
        break;
      }
    }
    if (!placed) ++i;
  }
  return placements;
}

std::vector<std::int32_t> Conversation::tokenize_rendered(const jinja::Rendered& rendered,
                                                          std::size_t from, std::size_t skip_from,
                                                          std::size_t skip_to) const {
  return encode_rendered_with_images(*tokenizer_, rendered, from, images_of(skip_from, skip_to));
}

std::vector<PromptImagePlacement> Conversation::image_placements() const {
  return place_prompt_images(ids_, images_of(0, 0));
}

}  // namespace quire::engine
