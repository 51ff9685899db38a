#include "quire/server/vision_support.h"

#include "quire/engine/generator/image_input.h"
#include "quire/server/api_error.h"

namespace quire::server {

bool model_sees_images(const ServedModel& model) {
  // The generator's switch comes first: a vision tower whose output no job
  // can carry into the prompt sees nothing.
  return engine::kGeneratorTakesImages && model.vision_tower && model.prepare_image != nullptr;
}

void check_images_seen(const ChatCompletionRequest& request, const ServedModel& model) {
  if (model_sees_images(model)) return;
  for (const ChatMessage& message : request.messages) {
    for (const ContentPart& part : message.parts) {
      if (!part.image) continue;
      throw ApiException(invalid_request("The model '" + model.id + "' cannot see images, and " +
                                             part.image->where +
                                             " is one. Send the request without image_url parts.",
                                         "messages"));
    }
  }
}

}  // namespace quire::server
