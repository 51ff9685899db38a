#pragma once

#include <QColor>
#include <QFont>
#include <QHash>
#include <QImage>
#include <QString>
#include <memory>
#include <optional>
#include <utility>

namespace quire::ui {

// A value or the reason there is none, in words a user can act on.
template <typename T>
class MathResult {
 public:
  MathResult(T value) : value_(std::move(value)) {}  // NOLINT: implicit on purpose
  static MathResult failure(QString error) { return MathResult(std::move(error), 0); }

  bool ok() const { return value_.has_value(); }
  const T& value() const { return *value_; }
  const QString& error() const { return error_; }

 private:
  MathResult(QString error, int) : error_(std::move(error)) {}
  std::optional<T> value_;
  QString error_;
};

// A formula painted for a text line: `image` carries the device pixel ratio it
// was painted for; `size` is in device-independent pixels; `baseline` is the
// distance from the image's top to the baseline of the formula, which lines up
// with the baseline of the surrounding text.
struct MathImage {
  QImage image;
  QSizeF size;
  qreal baseline = 0;
};

class KatexEngine;
class MathFonts;

// Turns TeX into MathML (KaTeX in Qt's JavaScript engine) and MathML into an
// image (our own layout over the KaTeX fonts). Not thread-safe: one renderer
// per thread; shared() is the GUI thread's. KaTeX is loaded on first use, and
// rendered images are kept, so that rendering a streaming reply again does not
// run KaTeX or lay out formulas again.
class MathRenderer {
 public:
  MathRenderer();
  ~MathRenderer();
  MathRenderer(const MathRenderer&) = delete;
  MathRenderer& operator=(const MathRenderer&) = delete;

  // The GUI thread's renderer, destroyed with the application object.
  static MathRenderer& shared();

  // MathML of `tex` (a <math> element, display="block" for display math), or
  // KaTeX's parse error, or why KaTeX could not be loaded.
  MathResult<QString> toMathML(const QString& tex, bool display);

  // `tex` painted in `colour`, sized to go with text in `font`, for a screen
  // of `devicePixelRatio`. Errors as toMathML, or a MathML element the layout
  // does not know.
  MathResult<MathImage> render(const QString& tex, bool display, const QFont& font,
                               const QColor& colour, qreal devicePixelRatio = 1.0);

  // How many times KaTeX ran and how many images were laid out: tests check
  // that the cache answers a repeated formula.
  int katexRuns() const { return katexRuns_; }
  int layouts() const { return layouts_; }

 private:
  struct Key {
    QString tex;
    bool display = false;
    qreal emPixels = 0;
    QRgb colour = 0;
    qreal devicePixelRatio = 1;
    friend bool operator==(const Key&, const Key&) = default;
  };
  friend size_t qHash(const Key& key, size_t seed) noexcept {
    return qHashMulti(seed, key.tex, key.display, key.emPixels, key.colour, key.devicePixelRatio);
  }

  std::unique_ptr<KatexEngine> katex_;
  std::unique_ptr<MathFonts> fonts_;
  QHash<std::pair<QString, bool>, MathResult<QString>> mathml_;
  QHash<Key, MathResult<MathImage>> images_;
  int katexRuns_ = 0;
  int layouts_ = 0;
};

// The em of formulas set beside text in `font`, in device-independent pixels:
// a little larger than the text, as KaTeX sets them on the web, because the
// KaTeX fonts are small for their size next to a UI font.
qreal mathEmPixels(const QFont& font);

}  // namespace quire::ui
