#include "mcp_text.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace quire::tools::mcp_text {

QString from_std(const std::string& text) {
  return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
}

QByteArray bytes_of(const std::string& text) {
  return QByteArray(text.data(), static_cast<qsizetype>(text.size()));
}

std::string std_of(const QByteArray& bytes) {
  return std::string(bytes.constData(), static_cast<std::size_t>(bytes.size()));
}

QJsonObject object_of(const std::string& json_text) {
  if (json_text.empty()) return {};
  return QJsonDocument::fromJson(bytes_of(json_text)).object();
}

QJsonValue value_of(const std::string& json_text) {
  if (json_text.empty()) return QJsonValue(QJsonValue::Undefined);
  const QJsonDocument document = QJsonDocument::fromJson("[" + bytes_of(json_text) + "]");
  return document.array().at(0);
}

QString seconds_text(int ms) {
  if (ms % 1000 == 0) return QString::number(ms / 1000);
  return QString::number(ms / 1000.0, 'g', 3);
}

QString size_text(qint64 bytes) {
  if (bytes < 10 * 1024) return QStringLiteral("%1 bytes").arg(bytes);
  if (bytes < 10 * 1024 * 1024) return QStringLiteral("%1 KiB").arg(bytes / 1024);
  return QStringLiteral("%1 MiB").arg(bytes / (1024 * 1024));
}

QString first_line(const QString& text, int limit) {
  QString line = text.section(QLatin1Char('\n'), 0, 0).trimmed();
  if (line.size() > limit) line = line.left(limit) + QStringLiteral("...");
  return line;
}

McpTool tool_of(const ToolDescriptor& descriptor) {
  McpTool tool;
  tool.name = from_std(descriptor.name);
  tool.title = from_std(descriptor.title);
  tool.description = from_std(descriptor.description);
  tool.input_schema = object_of(descriptor.input_schema);
  tool.output_schema = object_of(descriptor.output_schema);
  tool.annotations = object_of(descriptor.annotations);
  tool.read_only_hint = descriptor.read_only_hint;
  tool.destructive_hint = descriptor.destructive_hint;
  return tool;
}

ToolCallResult ended(ToolCallOutcome outcome, const QString& error) {
  ToolCallResult result;
  result.outcome = outcome;
  result.is_error = true;
  result.error = error;
  result.text = error;
  switch (outcome) {
    case ToolCallOutcome::TimedOut:
    case ToolCallOutcome::Cancelled:
      result.summary = error.left(1).toUpper() + error.mid(1);
      break;
    default:
      result.summary = QStringLiteral("Failed: ") + first_line(error, 200);
      break;
  }
  return result;
}

}  // namespace quire::tools::mcp_text
