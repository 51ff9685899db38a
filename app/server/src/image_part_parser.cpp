#include "image_part_parser.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "quire/engine/vision/image_file_type.h"
#include "strict_base64.h"

namespace quire::server {
namespace {

using request::fail;
using request::Fields;
using request::json;
using request::kind_of;

// The media types taken: the formats the preprocessing reads (Qt's image
// readers), which OpenAI's API also takes.
constexpr std::array<std::string_view, 4> kImageTypes{"image/png", "image/jpeg", "image/webp",
                                                      "image/gif"};

std::string lowercase(std::string_view text) {
  std::string lower(text);
  std::ranges::transform(lower, lower.begin(), [](char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  });
  return lower;
}

// The taken format the bytes' signature says; empty when none of them.
std::string_view sniffed_mime_type(const std::vector<std::uint8_t>& bytes) {
  const std::string_view type = vision::media_type(vision::sniff_image_file_type(
      std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size())));
  return std::ranges::find(kImageTypes, type) != kImageTypes.end() ? type : std::string_view{};
}

// The media type a data: URL's header names, in lower case; image/jpg (a
// common misspelling) is image/jpeg.
std::string media_type(std::string_view header) {
  std::string type = lowercase(header.substr(0, header.find(';')));
  if (type == "image/jpg") type = "image/jpeg";
  return type;
}

// What a client sent, quoted in a message: at most 40 bytes of it, so that a
// megabyte of nonsense is not sent back.
std::string quote_clipped(std::string_view text) {
  constexpr std::size_t kShown = 40;
  return "\"" + std::string(text.substr(0, kShown)) + (text.size() > kShown ? "...\"" : "\"");
}

// The URL's scheme ("https"), or empty when it does not begin with one.
std::string scheme_of(std::string_view url) {
  const std::size_t colon = url.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon > 32) return {};
  const std::string_view scheme = url.substr(0, colon);
  const bool valid = std::ranges::all_of(scheme, [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '+' ||
           c == '-' || c == '.';
  });
  return valid ? lowercase(scheme) : std::string();
}

// The image of a data: URL, its media type and signature checked.
MessageImage image_of_data_url(std::string_view url, const std::string& name) {
  const std::string example =
      " Send the image inline as data:image/png;base64,... (or jpeg, webp, gif).";
  const std::string scheme = scheme_of(url);
  if (scheme == "http" || scheme == "https") {
    fail(name + " is an " + scheme + " URL: this server does not fetch images from the network." +
             example,
         "messages");
  }
  if (scheme != "data") {
    fail(name + " must be a data: URL holding the image" +
             (scheme.empty() ? std::string() : ", not a " + scheme + ": URL") + "." + example,
         "messages");
  }
  const std::string_view rest = url.substr(5);
  const std::size_t comma = rest.find(',');
  if (comma == std::string_view::npos) {
    fail(name + " is a data: URL without the ',' that begins its data." + example, "messages");
  }
  const std::string_view header = rest.substr(0, comma);
  const std::string_view data = rest.substr(comma + 1);
  MessageImage image;
  image.mime_type = media_type(header);
  if (std::ranges::find(kImageTypes, image.mime_type) == kImageTypes.end()) {
    fail(name +
             (image.mime_type.empty() ? std::string(" names no media type")
                                      : " has the media type " + quote_clipped(image.mime_type)) +
             ": this server takes image/png, image/jpeg, image/webp and image/gif.",
         "messages");
  }
  const std::size_t last_parameter = header.rfind(';');
  if (last_parameter == std::string_view::npos ||
      lowercase(header.substr(last_parameter + 1)) != "base64") {
    fail(name + " is a data: URL whose data is not marked base64 (\";base64,\")." + example,
         "messages");
  }
  if (data.empty()) fail(name + " holds no image data.", "messages");
  if (const std::size_t size = base64_decoded_size(data); size > kMaxImageBytes) {
    fail(name + " holds an image of " + std::to_string(size) +
             " bytes; this server takes images of at most " + std::to_string(kMaxImageBytes >> 20) +
             " MiB (" + std::to_string(kMaxImageBytes) + " bytes). Send it smaller.",
         "messages");
  }
  Base64Result decoded = decode_base64_strict(data);
  if (!decoded.problem.empty()) {
    fail(name + " does not hold valid base64: " + decoded.problem + ".", "messages");
  }
  const std::string_view sniffed = sniffed_mime_type(decoded.bytes);
  if (sniffed.empty()) {
    fail(name + " does not hold a PNG, JPEG, WebP or GIF file: its data begins with none of " +
             "their signatures.",
         "messages");
  }
  image.mime_type = sniffed;
  image.bytes = std::move(decoded.bytes);
  return image;
}

}  // namespace

MessageImage parse_image_part(const json& part, const std::string& where) {
  const json* value = Fields(part).find("image_url");
  const std::string field = where + ".image_url";
  if (!value) {
    fail(field + " is missing: give the image as {\"url\": \"data:image/png;base64,...\"}.",
         "messages");
  }
  std::string url;
  std::string detail = "auto";
  const bool bare = value->is_string();
  if (bare) {
    url = value->get<std::string>();
  } else if (value->is_object()) {
    const json* url_value = Fields(*value).find("url");
    if (!url_value || !url_value->is_string()) {
      fail(field + ".url must be a string, the image as a data: URL.", "messages");
    }
    url = url_value->get<std::string>();
    if (const json* detail_value = Fields(*value).find("detail")) {
      detail = detail_value->is_string() ? detail_value->get<std::string>() : std::string();
      if (detail != "auto" && detail != "low" && detail != "high") {
        fail(field + ".detail must be \"auto\", \"low\" or \"high\"; it is " +
                 (detail_value->is_string() ? quote_clipped(detail)
                                            : std::string(kind_of(*detail_value))) +
                 ".",
             "messages");
      }
    }
  } else {
    fail(field + " must be an object with the image's \"url\" (or the URL as a string), not " +
             std::string(kind_of(*value)) + ".",
         "messages");
  }
  MessageImage image = image_of_data_url(url, bare ? field : field + ".url");
  image.detail = std::move(detail);
  image.where = where;
  return image;
}

}  // namespace quire::server
