#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace quire::vision {

// What an image becomes in the prompt, as the model's processor writes it:
// runs of one piece of text (a special token or plain text such as "\n\n")
// repeated `count` times. Runs marked `image_positions` are the placeholders
// whose embeddings the vision tower's output replaces; the others are
// ordinary text the tokenizer encodes (Pixtral's [IMG_BREAK] and [IMG_END],
// Gemma 3's <start_of_image> and the "\n\n" around it, Qwen's
// <|vision_start|> and <|vision_end|>).
struct TokenRun {
  std::string text;
  std::size_t count = 1;
  bool image_positions = false;

  TokenRun(std::string text_, std::size_t count_, bool image_positions_)
      : text(std::move(text_)), count(count_), image_positions(image_positions_) {}
};

struct ImageTokenLayout {
  std::vector<TokenRun> runs;

  // Appends a run, merging it into the last one when it repeats it.
  void add(const std::string& text, std::size_t count = 1, bool image_positions = false);
  // How many placeholder positions the image's embeddings fill.
  std::size_t image_positions() const;
  // The prompt text, every run written out `count` times.
  std::string text() const;
};

}  // namespace quire::vision
