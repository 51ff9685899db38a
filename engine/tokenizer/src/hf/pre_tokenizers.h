#pragma once

#include <memory>
#include <string>
#include <vector>

#include "json_field.h"

namespace quire::engine::detail {

// A piece of text on its way to the model. `at_start`: the piece begins where
// the whole input text begins (Metaspace's prepend_scheme "first" needs it).
struct PreToken {
  std::string text;
  bool at_start = false;
};

// Where a pre-tokenizer puts its words, one at a time, in order: a reference
// to a callable that outlives it. A chain of pre-tokenizers and the model so
// work word by word, without a list of every word of a long text between
// them (a megabyte of text makes hundreds of thousands).
class PreTokenSink {
 public:
  template <typename Function>
  explicit PreTokenSink(Function& function)
      : object_(&function), call_([](void* object, PreToken&& word) {
          (*static_cast<Function*>(object))(std::move(word));
        }) {}
  void operator()(PreToken&& word) const { call_(object_, std::move(word)); }

 private:
  void* object_;
  void (*call_)(void*, PreToken&&);
};

// tokenizer.json's "pre_tokenizer": splits (and may rewrite) the normalized
// text into the words the model tokenizes one by one.
class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  virtual void pre_tokenize(PreToken piece, const PreTokenSink& emit) const = 0;
  // Whether the pieces come out in GPT-2's byte-level alphabet.
  virtual bool byte_level() const { return false; }
};

// nullptr for a null pre-tokenizer. Throws ModelError for an unknown type.
std::unique_ptr<PreTokenizer> read_pre_tokenizer(const JsonField& config);

}  // namespace quire::engine::detail
