#include "math_fonts.h"

#include <QDir>

namespace quire::ui {
namespace {

constexpr std::array<const char*, kMathFaceCount> kFaceFiles = {
    "KaTeX_Main-Regular.ttf",     "KaTeX_Main-Bold.ttf",           "KaTeX_Main-Italic.ttf",
    "KaTeX_Main-BoldItalic.ttf",  "KaTeX_Math-Italic.ttf",         "KaTeX_Math-BoldItalic.ttf",
    "KaTeX_AMS-Regular.ttf",      "KaTeX_Caligraphic-Regular.ttf", "KaTeX_Fraktur-Regular.ttf",
    "KaTeX_Fraktur-Bold.ttf",     "KaTeX_SansSerif-Regular.ttf",   "KaTeX_SansSerif-Bold.ttf",
    "KaTeX_SansSerif-Italic.ttf", "KaTeX_Script-Regular.ttf",      "KaTeX_Typewriter-Regular.ttf",
    "KaTeX_Size1-Regular.ttf",    "KaTeX_Size2-Regular.ttf",       "KaTeX_Size3-Regular.ttf",
    "KaTeX_Size4-Regular.ttf",
};

}  // namespace

QString MathFonts::defaultDirectory() {
  const QString overridden = qEnvironmentVariable("QUIRE_KATEX_FONTS");
  return overridden.isEmpty() ? QStringLiteral("/usr/share/fonts/truetype/katex") : overridden;
}

MathFonts::MathFonts(QString directory) : directory_(std::move(directory)) {}

void MathFonts::load() {
  if (loaded_) return;
  loaded_ = true;
  QStringList missing;
  const QDir dir(directory_);
  for (int i = 0; i < kMathFaceCount; ++i) {
    const QString file = QString::fromLatin1(kFaceFiles[static_cast<std::size_t>(i)]);
    // Unhinted: glyph boxes scale exactly with the size, as the layout assumes.
    QRawFont font(dir.filePath(file), 20, QFont::PreferNoHinting);
    if (!font.isValid()) missing << file;
    faces_[static_cast<std::size_t>(i)] = font;
  }
  if (!missing.isEmpty())
    error_ = QStringLiteral(
                 "The KaTeX fonts are missing from %1 (%2); install the fonts-katex "
                 "package to see formulas rendered")
                 .arg(directory_, missing.join(QStringLiteral(", ")));
}

QString MathFonts::error() {
  load();
  return error_;
}

QRawFont MathFonts::font(MathFace face, qreal pixelSize) {
  load();
  QRawFont font = faces_[static_cast<std::size_t>(face)];
  if (font.isValid()) font.setPixelSize(pixelSize);
  return font;
}

}  // namespace quire::ui
