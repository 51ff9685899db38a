# Writes a C++ source that defines quire::engine::default_training_corpus()
# with the bytes of INPUT, so the corpus ships inside the library and needs no
# file at run time. Run as: cmake -DINPUT=<text> -DOUTPUT=<cpp> -P embed_corpus.cmake
# Bytes are written as numbers, so no character of the text needs escaping.
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hex_length)
math(EXPR size "${hex_length} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x..,){20})" "\\1\n" bytes "${bytes}")
file(WRITE "${OUTPUT}" "// Generated from ${INPUT} by embed_corpus.cmake; do not edit.
#include \"quire/engine/tokenizer/training.h\"

namespace quire::engine {
namespace {
constexpr unsigned char kCorpus[${size} + 1] = {
${bytes}0};
}  // namespace

std::string_view default_training_corpus() {
  return {reinterpret_cast<const char*>(kCorpus), ${size}};
}

}  // namespace quire::engine
")
