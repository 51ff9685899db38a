#pragma once

// The Hub's HTTP headers, read without an HTTP library: `Link` pagination,
// the file metadata of a /resolve/ answer (X-Repo-Commit, X-Linked-Etag,
// X-Linked-Size, ETag, Location), Retry-After and Content-Range.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace quire::hub {

// The URL of `Link: <url>; rel="next"`, or nullopt when there is no next page.
std::optional<std::string> next_page_url(std::string_view link_header);

// An ETag without its weak prefix and quotes: W/"abc" -> abc.
std::string normalize_etag(std::string_view etag);

// A header by name (case-insensitive), nullopt when absent.
using HeaderLookup = std::function<std::optional<std::string>(std::string_view name)>;

struct FileMetadata {
  std::string commit;      // X-Repo-Commit
  std::string etag;        // X-Linked-Etag, else ETag: the blob's name in the cache
  std::int64_t size = -1;  // X-Linked-Size, else Content-Length when not redirected
  std::string location;    // Location of a redirect, "" otherwise
};

// The metadata of a /resolve/ answer. `redirected` tells that the answer is a
// 3xx, whose Content-Length is the redirect page's, not the file's. Throws
// HubProtocolError naming what is missing (a proxy that strips the headers
// is the usual cause).
FileMetadata file_metadata(const HeaderLookup& headers, bool redirected);

// Retry-After as seconds from `now_unix`: a number of seconds or an HTTP
// date. nullopt when unreadable; 0 for a date in the past.
std::optional<std::int64_t> retry_after_seconds(std::string_view value, std::int64_t now_unix);

struct ContentRange {
  std::int64_t first = 0;
  std::int64_t last = 0;
  std::int64_t total = -1;  // -1 for "*"
};

// "bytes 100-199/1000"; nullopt when not that shape.
std::optional<ContentRange> parse_content_range(std::string_view value);

}  // namespace quire::hub
