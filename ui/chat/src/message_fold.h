#pragma once

#include <QString>
#include <optional>

namespace quire::ui {

// Where a text folds and how much of it shows while folded.
struct FoldLimits {
  int afterLines = 0;  // folds past this many lines
  int afterChars = 0;  // or past this many characters
  int shownLines = 0;  // what a folded text shows: at most this many lines
  int shownChars = 0;  // and at most this many characters
};

// Long messages are shown folded, their beginning and a "Show all" toggle, so
// that a pasted document does not become a bubble many screens tall and the
// conversation around it stays readable. Any message folds past these limits.
inline constexpr FoldLimits kMessageFold{40, 4000, 12, 1200};
// A tool call's arguments and result sit inside a card under a reply: they
// fold much sooner, so that a reply that read three files stays a reply.
inline constexpr FoldLimits kToolArgumentsFold{12, 1200, 8, 800};
inline constexpr FoldLimits kToolResultFold{6, 600, 4, 400};

// The beginning of `text` to show while it is folded (ending in "…"), or
// nullopt when the text is short enough to show whole.
std::optional<QString> foldedText(const QString& text, const FoldLimits& limits = kMessageFold);

}  // namespace quire::ui
