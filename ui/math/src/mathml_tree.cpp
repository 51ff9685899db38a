#include "mathml_tree.h"

#include <QXmlStreamReader>

namespace quire::ui {

MathResult<MathNode> parseMathML(const QString& mathml) {
  QXmlStreamReader reader(mathml);
  std::vector<MathNode> stack;
  std::optional<MathNode> root;
  while (!reader.atEnd()) {
    switch (reader.readNext()) {
      case QXmlStreamReader::StartElement: {
        MathNode node;
        node.tag = reader.name().toString();
        for (const QXmlStreamAttribute& attribute : reader.attributes())
          node.attributes.insert(attribute.name().toString(), attribute.value().toString());
        stack.push_back(std::move(node));
        break;
      }
      case QXmlStreamReader::Characters:
        if (!stack.empty()) stack.back().text += reader.text();
        break;
      case QXmlStreamReader::EndElement: {
        MathNode node = std::move(stack.back());
        stack.pop_back();
        if (stack.empty())
          root = std::move(node);
        else
          stack.back().children.push_back(std::move(node));
        break;
      }
      default:
        break;
    }
  }
  if (reader.hasError())
    return MathResult<MathNode>::failure(
        QStringLiteral("Malformed MathML: %1").arg(reader.errorString()));
  if (!root || root->tag != u"math")
    return MathResult<MathNode>::failure(QStringLiteral("MathML without a <math> element"));
  return std::move(*root);
}

}  // namespace quire::ui
