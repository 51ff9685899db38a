#include "quire/app/cache_format_choices.h"

#include "quire/cache/cache_format.h"

namespace quire::app {
namespace {

QString text_of(std::string_view text) {
  return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
}

// What a coding stores per value, in the words the settings use.
QString explanation_of(const cache::TensorCoding& coding) {
  switch (coding.scales) {
    case cache::ScaleLayout::None:
      return QStringLiteral("%1-bit floating point").arg(coding.bits);
    case cache::ScaleLayout::Fp32PerPageHead:
      return QStringLiteral("%1-bit floating point, a scale per page and head").arg(coding.bits);
    case cache::ScaleLayout::Fp16PerGroup:
      return QStringLiteral("%1-bit integers, a scale per %2 values")
          .arg(coding.bits)
          .arg(coding.group_size);
  }
  return {};
}

// The pair of one coding for both halves: it carries the coding's own name
// ("q4") and title ("Q4"), which is how the cache spells a half.
const cache::CacheFormatInfo& coding_alone(cache::ElementCoding coding) {
  return cache::format_info({coding, coding});
}

}  // namespace

ui::CacheFormatChoices cache_format_choices() {
  ui::CacheFormatChoices choices;
  for (const cache::ElementCoding coding : cache::all_element_codings()) {
    const cache::CacheFormatInfo& both = coding_alone(coding);
    choices.codings.append({text_of(both.name), text_of(both.title), explanation_of(both.key),
                            both.bits_per_element()});
  }
  for (const cache::CacheFormat format : cache::all_cache_format_pairs()) {
    const cache::CacheFormatInfo& info = cache::format_info(format);
    choices.formats.append({text_of(info.name), text_of(coding_alone(format.key).name),
                            text_of(coding_alone(format.value).name), text_of(info.title),
                            info.bits_per_element()});
  }
  return choices;
}

}  // namespace quire::app
