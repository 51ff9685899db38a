#pragma once

#include "quire/server/openai_request.h"
#include "request_fields.h"

namespace quire::server {

// DRY, XTC, top-nσ and mirostat's fields of a request body into `sampling`;
// a value out of range or of the wrong type is a 400 naming the field.
void parse_tuned_sampling(const request::Fields& fields, SamplingFields& sampling);

}  // namespace quire::server
