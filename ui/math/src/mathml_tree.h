#pragma once

#include <QHash>
#include <QString>
#include <vector>

#include "quire/ui/math_renderer.h"

namespace quire::ui {

// A MathML element as the layout reads it: its name, attributes, the text of
// a token element (mi, mn, mo, mtext) and its child elements.
struct MathNode {
  QString tag;
  QHash<QString, QString> attributes;
  QString text;
  std::vector<MathNode> children;

  QString attribute(const QString& name) const { return attributes.value(name); }
  bool flag(const QString& name) const { return attributes.value(name) == u"true"; }
};

// Parses a <math> element; an error names what is malformed.
MathResult<MathNode> parseMathML(const QString& mathml);

}  // namespace quire::ui
