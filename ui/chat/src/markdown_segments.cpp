#include "markdown_segments.h"

#include <QStringList>
#include <optional>

namespace quire::ui {
namespace {

struct Fence {
  QChar marker;
  qsizetype length = 0;
  qsizetype indent = 0;
  QString language;
};

qsizetype leadingSpaces(const QString& line) {
  qsizetype n = 0;
  while (n < line.size() && line[n] == u' ')
    ++n;
  return n;
}

qsizetype runOf(const QString& line, qsizetype from, QChar marker) {
  qsizetype end = from;
  while (end < line.size() && line[end] == marker)
    ++end;
  return end - from;
}

std::optional<Fence> openingFence(const QString& line) {
  const qsizetype indent = leadingSpaces(line);
  if (indent > 3 || indent >= line.size()) return std::nullopt;
  const QChar marker = line[indent];
  if (marker != u'`' && marker != u'~') return std::nullopt;
  const qsizetype length = runOf(line, indent, marker);
  if (length < 3) return std::nullopt;
  const QString info = line.mid(indent + length).trimmed();
  // "```not a fence```" is inline code: backtick fences take no backticks after.
  if (marker == u'`' && info.contains(u'`')) return std::nullopt;
  return Fence{marker, length, indent, info.section(u' ', 0, 0)};
}

bool closesFence(const QString& line, const Fence& fence) {
  const qsizetype indent = leadingSpaces(line);
  if (indent > 3) return false;
  const qsizetype length = runOf(line, indent, fence.marker);
  if (length < fence.length) return false;
  return line.mid(indent + length).trimmed().isEmpty();
}

// Content lines lose up to the fence's own indentation, as CommonMark says.
QString unindent(const QString& line, qsizetype indent) {
  return line.mid(qMin(indent, leadingSpaces(line)));
}

}  // namespace

QList<MarkdownSegment> splitFencedCode(const QString& markdown) {
  QList<MarkdownSegment> segments;
  QStringList prose;
  QStringList code;
  std::optional<Fence> fence;

  auto flushProse = [&] {
    QString text = prose.join(u'\n');
    prose.clear();
    if (!text.trimmed().isEmpty())
      segments.push_back({MarkdownSegment::Kind::Prose, std::move(text), {}, true});
  };

  const QStringList lines = markdown.split(u'\n');
  for (QString line : lines) {
    if (line.endsWith(u'\r')) line.chop(1);
    if (!fence) {
      fence = openingFence(line);
      if (fence) {
        flushProse();
        code.clear();
      } else {
        prose.push_back(line);
      }
    } else if (closesFence(line, *fence)) {
      segments.push_back({MarkdownSegment::Kind::Code, code.join(u'\n'), fence->language, true});
      fence.reset();
    } else {
      code.push_back(unindent(line, fence->indent));
    }
  }
  if (fence) {
    segments.push_back({MarkdownSegment::Kind::Code, code.join(u'\n'), fence->language, false});
  }
  flushProse();
  return segments;
}

}  // namespace quire::ui
