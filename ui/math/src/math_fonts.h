#pragma once

#include <QRawFont>
#include <QString>
#include <array>

namespace quire::ui {

// The faces of the KaTeX fonts the layout sets formulas in.
enum class MathFace {
  Main,
  MainBold,
  MainItalic,
  MainBoldItalic,
  MathItalic,
  MathBoldItalic,
  Ams,
  Caligraphic,
  Fraktur,
  FrakturBold,
  SansSerif,
  SansSerifBold,
  SansSerifItalic,
  Script,
  Typewriter,
  Size1,
  Size2,
  Size3,
  Size4,
};
inline constexpr int kMathFaceCount = static_cast<int>(MathFace::Size4) + 1;

// The KaTeX font files, each read once and handed out at any pixel size.
// QRawFont rather than QFont: the layout needs exact glyph boxes at
// fractional sizes and must never get a substitute family from font matching.
class MathFonts {
 public:
  // Debian's fonts-katex folder; QUIRE_KATEX_FONTS overrides it.
  static QString defaultDirectory();

  explicit MathFonts(QString directory = defaultDirectory());

  // Empty when every face loaded, else what is missing and what to install.
  QString error();
  // `face` at `pixelSize`; invalid when its file could not be read.
  QRawFont font(MathFace face, qreal pixelSize);

 private:
  void load();

  QString directory_;
  bool loaded_ = false;
  QString error_;
  std::array<QRawFont, kMathFaceCount> faces_;
};

}  // namespace quire::ui
