#include "vision_fixture.h"

#include <cstddef>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace quire::test {
namespace {

using Json = nlohmann::json;

// Errors name the fixture and the field, so that a regenerated file with a
// changed layout says what to fix.
class FixtureReader {
 public:
  FixtureReader(std::filesystem::path path, Json root)
      : path_(std::move(path)), root_(std::move(root)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& problem) const {
    throw std::runtime_error(path_.string() + ": " + field + " " + problem +
                             " (tests/tools/make_vision_fixtures.sh describes the format; "
                             "regenerate the fixture with it)");
  }

  const Json& at(const Json& object, const std::string& key, const std::string& field) const {
    if (!object.is_object() || !object.contains(key)) fail(field, "is missing");
    return object.at(key);
  }

  std::string string(const Json& value, const std::string& field) const {
    if (!value.is_string()) fail(field, "is not a string");
    return value.get<std::string>();
  }

  std::int64_t integer(const Json& value, const std::string& field) const {
    if (!value.is_number_integer()) fail(field, "is not an integer");
    return value.get<std::int64_t>();
  }

  std::size_t index(const Json& value, const std::string& field) const {
    const std::int64_t number = integer(value, field);
    if (number < 0) fail(field, "is negative");
    return static_cast<std::size_t>(number);
  }

  std::int32_t token(const Json& value, const std::string& field) const {
    const std::int64_t number = integer(value, field);
    if (number < 0 || number > INT32_MAX) fail(field, "is not a token id");
    return static_cast<std::int32_t>(number);
  }

  const Json& array(const Json& value, const std::string& field) const {
    if (!value.is_array()) fail(field, "is not an array");
    return value;
  }

  std::vector<std::vector<double>> rows(const std::string& key) const {
    std::vector<std::vector<double>> out;
    const Json& list = array(at(root_, key, key), key);
    for (std::size_t r = 0; r < list.size(); ++r) {
      const std::string field = key + "[" + std::to_string(r) + "]";
      std::vector<double> row;
      for (const Json& value : array(list[r], field)) {
        if (!value.is_number()) fail(field, "holds a value that is not a number");
        row.push_back(value.get<double>());
      }
      out.push_back(std::move(row));
    }
    return out;
  }

  const Json& root() const { return root_; }

 private:
  std::filesystem::path path_;
  Json root_;
};

VisionFixtureImage read_image(const FixtureReader& reader, const Json& entry,
                              const std::string& field) {
  VisionFixtureImage image;
  image.first = reader.index(reader.at(entry, "first", field + ".first"), field + ".first");
  image.count = reader.index(reader.at(entry, "count", field + ".count"), field + ".count");
  const std::string pixels_field = field + ".pixels";
  const Json& pixels = reader.at(entry, "pixels", pixels_field);
  const std::string formula = reader.string(reader.at(pixels, "formula", pixels_field + ".formula"),
                                            pixels_field + ".formula");
  if (formula != kVisionFixturePixelFormula) {
    reader.fail(pixels_field + ".formula", "is \"" + formula +
                                               "\", not the formula this reader computes (\"" +
                                               kVisionFixturePixelFormula + "\")");
  }
  const std::string shape_field = pixels_field + ".shape";
  const Json& shape = reader.array(reader.at(pixels, "shape", shape_field), shape_field);
  if (shape.size() != 3)
    reader.fail(shape_field, "does not have 3 sizes (channels, height, width)");
  for (std::size_t d = 0; d < 3; ++d) {
    const std::int64_t size = reader.integer(shape[d], shape_field);
    if (size <= 0 || size > 65536) reader.fail(shape_field, "holds a size out of range");
    image.shape[d] = static_cast<int>(size);
  }
  image.phase =
      reader.integer(reader.at(pixels, "phase", pixels_field + ".phase"), pixels_field + ".phase");
  image.pixels = vision_fixture_pixels(image.shape, image.phase);
  return image;
}

void check_image_runs(const FixtureReader& reader, const VisionFixture& fixture) {
  for (std::size_t i = 0; i < fixture.images.size(); ++i) {
    const VisionFixtureImage& image = fixture.images[i];
    const std::string field = "images[" + std::to_string(i) + "]";
    if (image.count == 0) reader.fail(field + ".count", "is 0");
    if (image.first == 0 || image.first + image.count >= fixture.tokens.size())
      reader.fail(field, "does not lie inside the tokens with its boi before and eoi after");
    if (fixture.tokens[image.first - 1] != fixture.boi_token)
      reader.fail(field, "is not preceded by boi_token");
    if (fixture.tokens[image.first + image.count] != fixture.eoi_token)
      reader.fail(field, "is not followed by eoi_token");
    for (std::size_t p = image.first; p < image.first + image.count; ++p) {
      if (fixture.tokens[p] != fixture.image_token)
        reader.fail(field, "covers position " + std::to_string(p) + ", which is not image_token");
    }
  }
  std::size_t image_tokens = 0;
  for (const std::int32_t token : fixture.tokens)
    image_tokens += token == fixture.image_token ? 1 : 0;
  std::size_t declared = 0;
  for (const VisionFixtureImage& image : fixture.images)
    declared += image.count;
  if (image_tokens != declared)
    reader.fail("tokens", "hold image tokens that no entry of images covers");
}

void check_rows(const FixtureReader& reader, const VisionFixture& fixture) {
  for (const std::size_t position : fixture.positions) {
    if (position >= fixture.tokens.size())
      reader.fail("positions", "name a position past the tokens");
  }
  const std::pair<const char*, const std::vector<std::vector<double>>*> tables[] = {
      {"logits", &fixture.logits}, {"logits_causal", &fixture.logits_causal}};
  for (const auto& [key, table] : tables) {
    if (table->size() != fixture.positions.size())
      reader.fail(key, "does not have one row per position");
    for (const std::vector<double>& row : *table) {
      if (row.empty() || row.size() != table->front().size())
        reader.fail(key, "has rows of different widths");
    }
  }
  if (fixture.logits.front().size() != fixture.logits_causal.front().size())
    reader.fail("logits_causal", "rows are not as wide as those of logits");
}

}  // namespace

std::vector<float> vision_fixture_pixels(const std::array<int, 3>& shape, std::int64_t phase) {
  const std::int64_t count = std::int64_t{shape[0]} * shape[1] * shape[2];
  std::vector<float> pixels(static_cast<std::size_t>(count));
  // The remainder is below 2^16: dividing by 2^15 and subtracting 1 are exact
  // in double, and the result has at most 16 significant bits, so the float
  // is exactly the value the formula defines.
  const std::int64_t offset = ((phase % 65536) * 7919 + 12345) % 65536;
  for (std::int64_t i = 0; i < count; ++i) {
    std::int64_t numerator = ((i % 65536) * 40503 + offset) % 65536;
    if (numerator < 0) numerator += 65536;  // a negative phase: mod as Python takes it
    pixels[static_cast<std::size_t>(i)] =
        static_cast<float>(static_cast<double>(numerator) / 32768.0 - 1.0);
  }
  return pixels;
}

VisionFixture read_vision_fixture(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::runtime_error(path.string() + ": cannot be opened");
  std::stringstream text;
  text << file.rdbuf();
  Json root = Json::parse(text.str(), nullptr, false);
  if (root.is_discarded() || !root.is_object())
    throw std::runtime_error(path.string() + ": is not a JSON object");
  const FixtureReader reader(path, std::move(root));
  const Json& json = reader.root();

  VisionFixture fixture;
  fixture.name = reader.string(reader.at(json, "name", "name"), "name");
  for (const Json& argument :
       reader.array(reader.at(json, "make_model", "make_model"), "make_model"))
    fixture.make_model.push_back(reader.string(argument, "make_model"));
  const Json& digests = reader.at(json, "sha256", "sha256");
  if (!digests.is_object() || digests.empty()) reader.fail("sha256", "is not an object of digests");
  for (const auto& [file_name, digest] : digests.items())
    fixture.sha256[file_name] = reader.string(digest, "sha256." + file_name);
  for (const Json& token : reader.array(reader.at(json, "tokens", "tokens"), "tokens"))
    fixture.tokens.push_back(reader.token(token, "tokens"));
  fixture.image_token = reader.token(reader.at(json, "image_token", "image_token"), "image_token");
  fixture.boi_token = reader.token(reader.at(json, "boi_token", "boi_token"), "boi_token");
  fixture.eoi_token = reader.token(reader.at(json, "eoi_token", "eoi_token"), "eoi_token");
  const Json& images = reader.array(reader.at(json, "images", "images"), "images");
  if (images.empty()) reader.fail("images", "is empty");
  for (std::size_t i = 0; i < images.size(); ++i)
    fixture.images.push_back(read_image(reader, images[i], "images[" + std::to_string(i) + "]"));
  for (const Json& position : reader.array(reader.at(json, "positions", "positions"), "positions"))
    fixture.positions.push_back(reader.index(position, "positions"));
  fixture.logits = reader.rows("logits");
  fixture.logits_causal = reader.rows("logits_causal");
  for (const Json& token : reader.array(reader.at(json, "greedy", "greedy"), "greedy"))
    fixture.greedy.push_back(reader.token(token, "greedy"));

  check_image_runs(reader, fixture);
  check_rows(reader, fixture);
  return fixture;
}

}  // namespace quire::test
