#include "quire/hub/hub_headers.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <ctime>

#include "quire/hub/hub_error.h"

namespace quire::hub {
namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  return text;
}

std::optional<std::int64_t> to_integer(std::string_view text) {
  text = trim(text);
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::optional<std::string> next_page_url(std::string_view link_header) {
  // Link: <https://…?cursor=…>; rel="next", <…>; rel="prev"
  while (!link_header.empty()) {
    const std::size_t open = link_header.find('<');
    if (open == std::string_view::npos) return std::nullopt;
    const std::size_t close = link_header.find('>', open);
    if (close == std::string_view::npos) return std::nullopt;
    const std::string_view url = link_header.substr(open + 1, close - open - 1);
    std::string_view rest = link_header.substr(close + 1);
    const std::size_t next_link = rest.find(",");
    const std::string_view params = rest.substr(0, next_link);
    std::size_t start = 0;
    while (start <= params.size()) {
      const std::size_t semicolon = params.find(';', start);
      const std::string_view param = trim(params.substr(
          start, semicolon == std::string_view::npos ? std::string_view::npos : semicolon - start));
      const std::size_t equals = param.find('=');
      if (equals != std::string_view::npos &&
          equals_ignoring_case(trim(param.substr(0, equals)), "rel")) {
        std::string_view value = trim(param.substr(equals + 1));
        if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
          value = value.substr(1, value.size() - 2);
        if (equals_ignoring_case(value, "next")) return std::string(url);
      }
      if (semicolon == std::string_view::npos) break;
      start = semicolon + 1;
    }
    if (next_link == std::string_view::npos) return std::nullopt;
    link_header = rest.substr(next_link + 1);
  }
  return std::nullopt;
}

std::string normalize_etag(std::string_view etag) {
  etag = trim(etag);
  if (etag.starts_with("W/")) etag.remove_prefix(2);
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"')
    etag = etag.substr(1, etag.size() - 2);
  return std::string(etag);
}

FileMetadata file_metadata(const HeaderLookup& headers, bool redirected) {
  FileMetadata metadata;
  metadata.commit = headers("X-Repo-Commit").value_or("");
  if (metadata.commit.empty())
    throw HubProtocolError(
        "The Hub's answer has no X-Repo-Commit header; a proxy or firewall between here and "
        "the Hub may be removing it.");
  std::optional<std::string> etag = headers("X-Linked-Etag");
  if (!etag || etag->empty()) etag = headers("ETag");
  metadata.etag = normalize_etag(etag.value_or(""));
  if (metadata.etag.empty())
    throw HubProtocolError("The Hub's answer has neither an X-Linked-Etag nor an ETag header.");
  std::optional<std::string> size = headers("X-Linked-Size");
  if (!size && !redirected) size = headers("Content-Length");
  const std::optional<std::int64_t> bytes = size ? to_integer(*size) : std::nullopt;
  if (!bytes || *bytes < 0)
    throw HubProtocolError("The Hub's answer does not say the file's size.");
  metadata.size = *bytes;
  metadata.location = headers("Location").value_or("");
  return metadata;
}

std::optional<std::int64_t> retry_after_seconds(std::string_view value, std::int64_t now_unix) {
  value = trim(value);
  if (const std::optional<std::int64_t> seconds = to_integer(value))
    return *seconds < 0 ? std::nullopt : seconds;
  // An HTTP date: "Wed, 21 Oct 2015 07:28:00 GMT".
  std::tm parts{};
  const std::string text(value);
  const char* end = ::strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &parts);
  if (end == nullptr || *end != '\0') return std::nullopt;
  const std::int64_t when = ::timegm(&parts);
  return std::max<std::int64_t>(0, when - now_unix);
}

std::optional<ContentRange> parse_content_range(std::string_view value) {
  value = trim(value);
  if (!value.starts_with("bytes ")) return std::nullopt;
  value.remove_prefix(6);
  const std::size_t dash = value.find('-');
  const std::size_t slash = value.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || dash > slash)
    return std::nullopt;
  const auto first = to_integer(value.substr(0, dash));
  const auto last = to_integer(value.substr(dash + 1, slash - dash - 1));
  if (!first || !last || *last < *first) return std::nullopt;
  ContentRange range{*first, *last, -1};
  const std::string_view total = value.substr(slash + 1);
  if (total != "*") {
    const auto bytes = to_integer(total);
    if (!bytes || *bytes <= *last) return std::nullopt;
    range.total = *bytes;
  }
  return range;
}

}  // namespace quire::hub
