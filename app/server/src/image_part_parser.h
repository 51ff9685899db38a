#pragma once

// A user message's image_url content part: OpenAI's {"type": "image_url",
// "image_url": {"url": "data:image/png;base64,...", "detail": "auto"}}, or
// the URL as a bare string ("image_url": "data:..."), which vLLM also takes.
// The image must come inline as a data: URL: the server fetches nothing from
// the network. Every failure is an ApiException 400 naming the part.

#include <string>

#include "quire/server/chat_messages.h"
#include "request_fields.h"

namespace quire::server {

// `where` names the part ("messages[1].content[0]").
MessageImage parse_image_part(const request::json& part, const std::string& where);

}  // namespace quire::server
