#include "unicode_text.h"

#include <unicode/unorm2.h>
#include <unicode/ustring.h>

#include <stdexcept>
#include <vector>

namespace quire::engine::detail {
namespace {

std::u16string to_utf16(std::string_view text) {
  UErrorCode status = U_ZERO_ERROR;
  int32_t length = 0;
  u_strFromUTF8(nullptr, 0, &length, text.data(), static_cast<int32_t>(text.size()), &status);
  if (status != U_BUFFER_OVERFLOW_ERROR && U_FAILURE(status)) {
    throw std::runtime_error(std::string("cannot convert text to UTF-16: ") + u_errorName(status));
  }
  std::u16string out(static_cast<std::size_t>(length), u'\0');
  status = U_ZERO_ERROR;
  u_strFromUTF8(out.data(), length, nullptr, text.data(), static_cast<int32_t>(text.size()),
                &status);
  if (U_FAILURE(status)) {
    throw std::runtime_error(std::string("cannot convert text to UTF-16: ") + u_errorName(status));
  }
  return out;
}

std::string to_utf8(const std::u16string& text) {
  UErrorCode status = U_ZERO_ERROR;
  int32_t length = 0;
  u_strToUTF8(nullptr, 0, &length, text.data(), static_cast<int32_t>(text.size()), &status);
  std::string out(static_cast<std::size_t>(length), '\0');
  status = U_ZERO_ERROR;
  u_strToUTF8(out.data(), length, nullptr, text.data(), static_cast<int32_t>(text.size()), &status);
  if (U_FAILURE(status)) {
    throw std::runtime_error(std::string("cannot convert text to UTF-8: ") + u_errorName(status));
  }
  return out;
}

// Runs an ICU function of the usual preflight shape, growing the buffer once.
template <typename Function>
std::u16string grow_and_call(const std::u16string& source, Function&& function) {
  std::u16string out(source.size() + source.size() / 2 + 16, u'\0');
  UErrorCode status = U_ZERO_ERROR;
  int32_t length = function(out.data(), static_cast<int32_t>(out.size()), &status);
  if (status == U_BUFFER_OVERFLOW_ERROR) {
    out.assign(static_cast<std::size_t>(length), u'\0');
    status = U_ZERO_ERROR;
    length = function(out.data(), length, &status);
  }
  if (U_FAILURE(status)) {
    throw std::runtime_error(std::string("cannot normalize text: ") + u_errorName(status));
  }
  out.resize(static_cast<std::size_t>(length));
  return out;
}

}  // namespace

std::string normalize_unicode(std::string_view text, NormalForm form) {
  if (text.empty()) return {};
  UErrorCode status = U_ZERO_ERROR;
  const UNormalizer2* normalizer = nullptr;
  switch (form) {
    case NormalForm::NFC:
      normalizer = unorm2_getNFCInstance(&status);
      break;
    case NormalForm::NFD:
      normalizer = unorm2_getNFDInstance(&status);
      break;
    case NormalForm::NFKC:
      normalizer = unorm2_getNFKCInstance(&status);
      break;
    case NormalForm::NFKD:
      normalizer = unorm2_getNFKDInstance(&status);
      break;
  }
  if (U_FAILURE(status)) {
    throw std::runtime_error(std::string("Unicode normalization is unavailable: ") +
                             u_errorName(status));
  }
  const std::u16string source = to_utf16(text);
  // Most text is already normalized; skip the copy then.
  status = U_ZERO_ERROR;
  if (unorm2_isNormalized(normalizer, source.data(), static_cast<int32_t>(source.size()),
                          &status) &&
      U_SUCCESS(status)) {
    return std::string(text);
  }
  return to_utf8(grow_and_call(source, [&](char16_t* out, int32_t capacity, UErrorCode* error) {
    return unorm2_normalize(normalizer, source.data(), static_cast<int32_t>(source.size()), out,
                            capacity, error);
  }));
}

std::string lowercase(std::string_view text) {
  if (text.empty()) return {};
  const std::u16string source = to_utf16(text);
  return to_utf8(grow_and_call(source, [&](char16_t* out, int32_t capacity, UErrorCode* error) {
    return u_strToLower(out, capacity, source.data(), static_cast<int32_t>(source.size()), "",
                        error);
  }));
}

}  // namespace quire::engine::detail
