#pragma once

// Conversions between the protocol's std::string JSON and Qt's types, and
// the sentences the client writes, shared by the client's files.

#include <QByteArray>
#include <QJsonObject>
#include <QJsonValue>
#include <QString>
#include <string>

#include "quire/tools/mcp_client.h"
#include "quire/tools/mcp_protocol.h"

namespace quire::tools::mcp_text {

QString from_std(const std::string& text);
QByteArray bytes_of(const std::string& text);
std::string std_of(const QByteArray& bytes);
// The object, or the value, a JSON text holds (empty or undefined for "").
QJsonObject object_of(const std::string& json_text);
QJsonValue value_of(const std::string& json_text);
// 1500 ms as "1.5", 60000 as "60".
QString seconds_text(int ms);
// "812 bytes", "14 KiB", "3 MiB".
QString size_text(qint64 bytes);
// The first line of `text`, cut to `limit` characters.
QString first_line(const QString& text, int limit = 120);
McpTool tool_of(const ToolDescriptor& descriptor);
// A call that ended without a result: the outcome and why.
ToolCallResult ended(ToolCallOutcome outcome, const QString& error);

}  // namespace quire::tools::mcp_text
