#pragma once

// Small tokenizer.json files written in the tests, for the suites that check
// the parts of the tokenizer.json reader one by one.

#include <QByteArray>
#include <QByteArrayList>
#include <QList>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "quire/engine/tokenizer/tokenizer.h"

namespace quire::test {

using Json = nlohmann::json;

// A BPE model whose vocabulary is `tokens`, ids in order, with "<unk>" first
// when `with_unknown`; duplicates are dropped.
Json bpe_model(const QByteArrayList& tokens, const Json& merges = Json::array(),
               bool with_unknown = true);

// A BPE model with "<unk>" (0), then one token per character of the texts
// and then the texts themselves: with ignore_merges a word that is in the
// list comes out as one token, anything else character by character. So the
// pieces of an encoded text show where the pre-tokenizer cut it.
Json words_model(const QByteArrayList& words);

// A tokenizer.json around `model`; `components` adds or replaces members
// ("normalizer", "pre_tokenizer", "added_tokens", ...), each given as JSON
// text ("" leaves it out).
Json tokenizer_json(const Json& model, const QByteArray& normalizer = {},
                    const QByteArray& pre_tokenizer = {}, const QByteArray& post_processor = {},
                    const QByteArray& decoder = {}, const QByteArray& added_tokens = {});

// Loads through detail::load_tokenizer_json_text.
engine::Tokenizer load_json(const Json& tokenizer);

QByteArrayList pieces(const engine::Tokenizer& tokenizer, std::span<const std::int32_t> ids);
QList<int> to_list(const std::vector<std::int32_t>& ids);
std::vector<std::int32_t> to_ids(const QList<int>& list);

}  // namespace quire::test
