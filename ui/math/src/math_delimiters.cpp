#include "quire/ui/math_delimiters.h"

#include <QStringList>
#include <vector>

namespace quire::ui {
namespace {

struct Region {
  qsizetype start = 0;
  qsizetype end = 0;  // exclusive
};

bool isBlank(QStringView line) {
  return line.trimmed().isEmpty();
}

bool indentedAsCode(QStringView line) {
  if (line.startsWith(u'\t')) return true;
  return line.size() >= 4 && line.first(4) == u"    " && !isBlank(line);
}

// Indented code blocks: a run of lines indented by four spaces (or a tab) that
// starts after a blank line or at the top; blank lines inside it belong to it.
void addIndentedCode(const QString& text, std::vector<Region>& regions) {
  qsizetype lineStart = 0;
  bool previousBlank = true;
  bool inCode = false;
  while (lineStart <= text.size()) {
    qsizetype lineEnd = text.indexOf(u'\n', lineStart);
    if (lineEnd < 0) lineEnd = text.size();
    const QStringView line = QStringView(text).sliced(lineStart, lineEnd - lineStart);
    const bool blank = isBlank(line);
    if (indentedAsCode(line) && (inCode || previousBlank)) {
      inCode = true;
      regions.push_back({lineStart, lineEnd});
    } else if (!blank) {
      inCode = false;
    }
    previousBlank = blank;
    lineStart = lineEnd + 1;
  }
}

qsizetype runLength(const QString& text, qsizetype from, QChar c) {
  qsizetype end = from;
  while (end < text.size() && text[end] == c)
    ++end;
  return end - from;
}

// Where a blank line (a paragraph break) starts at or after `from`, or the end.
qsizetype paragraphEnd(const QString& text, qsizetype from) {
  qsizetype newline = text.indexOf(u'\n', from);
  while (newline >= 0) {
    qsizetype next = text.indexOf(u'\n', newline + 1);
    const qsizetype lineEnd = next < 0 ? text.size() : next;
    if (isBlank(QStringView(text).sliced(newline + 1, lineEnd - newline - 1)))
      return next < 0 ? text.size() : newline;
    newline = next;
  }
  return text.size();
}

// Code spans as CommonMark reads them: a backtick run closed by a run of the
// same length, within the paragraph.
void addCodeSpans(const QString& text, const std::vector<Region>& blocks,
                  std::vector<Region>& regions) {
  qsizetype i = 0;
  while (i < text.size()) {
    if (text[i] == u'\\') {
      i += 2;
      continue;
    }
    if (text[i] != u'`') {
      ++i;
      continue;
    }
    bool inBlock = false;
    for (const Region& block : blocks)
      inBlock = inBlock || (i >= block.start && i < block.end);
    const qsizetype opening = runLength(text, i, u'`');
    if (inBlock) {
      i += opening;
      continue;
    }
    const qsizetype limit = paragraphEnd(text, i);
    qsizetype j = i + opening;
    qsizetype close = -1;
    while (j < limit) {
      if (text[j] != u'`') {
        ++j;
        continue;
      }
      const qsizetype run = runLength(text, j, u'`');
      if (run == opening) {
        close = j;
        break;
      }
      j += run;
    }
    if (close < 0) {
      i += opening;  // literal backticks
      continue;
    }
    regions.push_back({i, close + opening});
    i = close + opening;
  }
}

class Scanner {
 public:
  explicit Scanner(const QString& text) : text_(text) {
    addIndentedCode(text_, excluded_);
    const std::vector<Region> blocks = excluded_;
    addCodeSpans(text_, blocks, excluded_);
  }

  QList<MathSpan> scan() {
    QList<MathSpan> spans;
    qsizetype i = 0;
    while (i < text_.size()) {
      if (const Region* region = excludedAt(i)) {
        i = region->end;
        continue;
      }
      const QChar c = text_[i];
      if (c == u'\\') {
        const QChar next = at(i + 1);
        if (next == u'(' || next == u'[') {
          const bool display = next == u'[';
          const qsizetype close = find(display ? u"\\]" : u"\\)", i + 2);
          if (close >= 0 && !text_.sliced(i + 2, close - i - 2).trimmed().isEmpty()) {
            spans.push_back({i, close + 2 - i, text_.sliced(i + 2, close - i - 2), display});
            i = close + 2;
            continue;
          }
        }
        i += 2;  // an escaped character, \$ included, is never a delimiter
        continue;
      }
      if (c == u'$' && at(i + 1) == u'$') {
        const qsizetype close = find(u"$$", i + 2);
        if (close >= 0 && !text_.sliced(i + 2, close - i - 2).trimmed().isEmpty()) {
          spans.push_back({i, close + 2 - i, text_.sliced(i + 2, close - i - 2), true});
          i = close + 2;
        } else {
          i += 2;
        }
        continue;
      }
      if (c == u'$' && i + 1 < text_.size() && !text_[i + 1].isSpace()) {
        const qsizetype close = closingDollar(i + 1);
        if (close >= 0) {
          spans.push_back({i, close + 1 - i, text_.sliced(i + 1, close - i - 1), false});
          i = close + 1;
          continue;
        }
      }
      ++i;
    }
    return spans;
  }

 private:
  QChar at(qsizetype i) const { return i < text_.size() ? text_[i] : QChar(); }

  const Region* excludedAt(qsizetype i) const {
    for (const Region& region : excluded_) {
      if (i >= region.start && i < region.end) return &region;
    }
    return nullptr;
  }

  // The first unescaped `delimiter` from `from` on within the paragraph, not
  // inside code; -1 when the formula is not closed (yet).
  qsizetype find(QStringView delimiter, qsizetype from) const {
    const qsizetype limit = paragraphEnd(text_, from);
    for (qsizetype j = from; j < limit; ++j) {
      if (excludedAt(j)) return -1;
      if (text_[j] == u'\\' && delimiter[0] != u'\\') {
        ++j;
        continue;
      }
      if (QStringView(text_).sliced(j).startsWith(delimiter))
        return j + delimiter.size() <= limit ? j : -1;
      if (text_[j] == u'\\') ++j;
    }
    return -1;
  }

  qsizetype closingDollar(qsizetype from) const {
    const qsizetype limit = paragraphEnd(text_, from);
    for (qsizetype j = from; j < limit; ++j) {
      if (excludedAt(j)) return -1;
      if (text_[j] == u'\\') {
        ++j;
        continue;
      }
      if (text_[j] != u'$') continue;
      if (!text_[j - 1].isSpace() && !at(j + 1).isDigit()) return j;
    }
    return -1;
  }

  const QString& text_;
  std::vector<Region> excluded_;
};

}  // namespace

QList<MathSpan> findMath(const QString& prose) {
  return Scanner(prose).scan();
}

}  // namespace quire::ui
