#pragma once

// Images in a rendered chat template, for whoever renders one: Conversation,
// and the server's requests with tools, which render their own messages.
// The template writes each image's marker; as transformers' processors do,
// the marker is replaced in the rendered text by the image's text before
// tokenizing, and each run of position tokens that text holds then takes the
// ids of its image's positions (image_position_ids), so that the prompt is
// keyed by the images' content (conversation_images.cpp).

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "quire/engine/generator/chat_template.h"
#include "quire/engine/generator/image_input.h"
#include "quire/engine/tokenizer/tokenizer.h"

namespace quire::engine {

// The ids of rendered.text from byte `from` on. `images` are every image
// the rendered messages hold, in their order (those whose markers lie
// before `from` are passed over). Throws ChatTemplateError when the
// template wrote fewer markers than there are images, std::invalid_argument
// when an image's text does not tokenize into its runs of positions.
std::vector<std::int32_t> encode_rendered_with_images(
    const Tokenizer& tokenizer, const jinja::Rendered& rendered, std::size_t from,
    std::span<const std::shared_ptr<const PreparedImage>> images);

// Where the runs of `images` lie in `ids` (JobRequest::images).
std::vector<PromptImagePlacement> place_prompt_images(
    std::span<const std::int32_t> ids,
    std::span<const std::shared_ptr<const PreparedImage>> images);

}  // namespace quire::engine
