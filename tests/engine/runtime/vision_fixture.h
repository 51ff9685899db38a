#pragma once

// The gemma3-vision-* fixtures of tests/data/reference: Gemma 3 prompts that
// hold images, with reference logits computed in float64 by
// tests/tools/reference_forward.py (tests/tools/make_vision_fixtures.sh writes
// them and documents every field). Plain C++: reading a fixture needs no
// engine and no Qt, and the pixels are computed here exactly as the Python
// computed them.

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace quire::test {

// The pixel formula every fixture image uses, as the fixture spells it.
inline constexpr const char* kVisionFixturePixelFormula =
    "((i * 40503 + phase * 7919 + 12345) mod 65536) / 32768 - 1";

// One image of the prompt: the image tokens at [first, first + count) take
// the tower's output for `pixels`, a channels x height x width float32 tensor
// (the processor's pixel_values for it).
struct VisionFixtureImage {
  std::size_t first = 0;
  std::size_t count = 0;
  std::array<int, 3> shape{};  // channels, height, width
  std::int64_t phase = 0;
  std::vector<float> pixels;
};

struct VisionFixture {
  std::string name;
  std::vector<std::string> make_model;        // quire-cli make-model arguments
  std::map<std::string, std::string> sha256;  // file name -> hex digest
  std::vector<std::int32_t> tokens;
  std::int32_t image_token = 0;
  std::int32_t boi_token = 0;
  std::int32_t eoi_token = 0;
  std::vector<VisionFixtureImage> images;
  // Rows of logits at `positions`, with the bidirectional image blocks as
  // transformers builds them, and with a purely causal mask (the control).
  std::vector<std::size_t> positions;
  std::vector<std::vector<double>> logits;
  std::vector<std::vector<double>> logits_causal;
  std::vector<std::int32_t> greedy;  // the greedy continuation after the prompt
};

// The formula's values for an image of `shape` (channels, height, width):
// v[i] = ((i * 40503 + phase * 7919 + 12345) mod 65536) / 32768 - 1 over the
// flat index i, every step exact in float32.
std::vector<float> vision_fixture_pixels(const std::array<int, 3>& shape, std::int64_t phase);

// Reads and checks one fixture: every field present with the right type,
// image runs inside the tokens and made of image_token between boi and eoi,
// one row of logits per position, rows of equal width. Throws
// std::runtime_error naming the file and the field at fault.
VisionFixture read_vision_fixture(const std::filesystem::path& path);

}  // namespace quire::test
