#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace quire::engine::disk_cache {

// What makes the K/V bytes of a page, besides its tokens and the cache coding:
// the model's weights, its config.json and its tokenizer. 16 bytes of blake2b,
// like a page hash.
struct ModelIdentity {
  std::array<std::uint8_t, 16> bytes{};

  // 32 lowercase hex digits: the name of the model's folder in the disk cache.
  std::string hex() const;

  friend bool operator==(const ModelIdentity&, const ModelIdentity&) = default;
  friend auto operator<=>(const ModelIdentity&, const ModelIdentity&) = default;
};

// The identity of the model in `directory`, read without reading its weights.
// It digests, each input named and length-prefixed:
//  - config.json, whole: many of its fields change K/V (heads, head size,
//    RoPE and its scaling, sliding windows, norms, calibrated kv_cache_scheme
//    scales), and a list of the ones that matter would silently go stale as
//    architectures are added. An edit elsewhere in it only costs a cold cache.
//  - for every "*.safetensors" file (by name) and model.safetensors.index.json:
//    the file's name, size and modification time (nanoseconds), and the
//    safetensors header (tensor names, dtypes, shapes, offsets, metadata).
//    The header alone does not change when a fine-tune or a requantization
//    keeps every shape; size and modification time do change when a file is
//    replaced, and cost one stat. Copying a model without keeping times
//    (cp without -p) makes it a new identity: a cold cache, never a wrong one.
//  - the tokenizer's files that are present (tokenizer.json, tokenizer.model,
//    tokenizer_config.json, special_tokens_map.json, added_tokens.json,
//    vocab.json, merges.txt), whole.
//  - `extra`: engine settings that change K/V for the same files (empty if none).
// Throws ModelError naming the file when the directory, config.json or a
// weight file cannot be read or a safetensors header is cut short.
ModelIdentity model_identity(const std::filesystem::path& directory, std::string_view extra = {});

}  // namespace quire::engine::disk_cache
