#pragma once

// Whether the generator's jobs may carry images. Off: a job is token ids
// only, and the forward pass reads every position's embedding from the
// embedding table. It turns on when JobRequest carries the images of its
// prompt and the forward pass takes the embeddings of image token ids from
// the vision tower's output (docs/vision.md); the vision checks of the
// server and the window (model_sees_images in app/server and app/gui)
// follow it, so that no image is accepted
// before the engine can place it.

namespace quire::engine {

inline constexpr bool kGeneratorTakesImages = false;

}  // namespace quire::engine
