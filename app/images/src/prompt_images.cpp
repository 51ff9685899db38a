#include "quire/app/images/prompt_images.h"

#include "quire/engine/model_error.h"

namespace quire::images {

std::shared_ptr<const engine::PreparedImage> prepare_image_file(engine::ImagePreparer& preparer,
                                                                const QByteArray& bytes) {
  return preparer.prepare(decode_image(bytes));
}

std::shared_ptr<engine::ImagePreparer> open_image_preparer(const std::filesystem::path& directory,
                                                           std::string& why) {
  why.clear();
  try {
    // The tower runs on the thread that steps the generator, between steps,
    // so it may use every core.
    std::shared_ptr<engine::ImagePreparer> preparer =
        engine::ImagePreparer::open(directory, std::make_shared<kernels::ThreadPool>());
    preparer->load_tower();
    return preparer;
  } catch (const engine::ModelError& error) {
    why = error.what();
    return nullptr;
  }
}

}  // namespace quire::images
