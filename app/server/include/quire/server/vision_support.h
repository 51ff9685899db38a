#pragma once

// Whether the served model sees images, decided in one place, and the answer
// to a request whose images it cannot see.

#include "quire/server/completion_job.h"
#include "quire/server/openai_request.h"

namespace quire::server {

// The model runs a vision tower (ServedModel::vision_tower) and the
// generator places images in a prompt (engine::kGeneratorTakesImages). The
// app's attachments ask the same of their model.
bool model_sees_images(const ServedModel& model);

// Throws ApiException 400 (param "messages") naming the model and the first
// image when the request holds images the model cannot see.
void check_images_seen(const ChatCompletionRequest& request, const ServedModel& model);

}  // namespace quire::server
