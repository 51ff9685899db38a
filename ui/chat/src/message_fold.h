#pragma once

#include <QString>
#include <optional>

namespace quire::ui {

// Long messages are shown folded, their beginning and a "Show all" toggle, so
// that a pasted document does not become a bubble many screens tall and the
// conversation around it stays readable. Any message folds past these limits.
inline constexpr int kFoldAfterLines = 40;
inline constexpr int kFoldAfterChars = 4000;
// What a folded message shows.
inline constexpr int kFoldedLines = 12;
inline constexpr int kFoldedChars = 1200;

// The beginning of `text` to show while it is folded (ending in "…"), or
// nullopt when the text is short enough to show whole.
std::optional<QString> foldedText(const QString& text);

}  // namespace quire::ui
