#include "template_test_support.h"

#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <ctime>

#include "quire/engine/template/json_value.h"

#ifndef QUIRE_PYTHON
#define QUIRE_PYTHON "/usr/bin/python3"
#endif
#ifndef QUIRE_REFERENCE_DIR
#define QUIRE_REFERENCE_DIR "tests/reference"
#endif

namespace quire::test {

using engine::jinja::Value;

std::map<std::string, Value> globals_from_json(const OrderedJson& context, bool literal) {
  std::map<std::string, Value> globals;
  for (auto it = context.begin(); it != context.end(); ++it)
    globals[it.key()] = engine::jinja::value_from_json(it.value(), literal);
  return globals;
}

engine::jinja::RenderOptions options_at(const std::string& iso) {
  std::tm tm{};
  std::sscanf(iso.c_str(), "%d-%d-%dT%d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
              &tm.tm_min, &tm.tm_sec);
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  tm.tm_isdst = -1;
  engine::jinja::RenderOptions options;
  options.now = std::chrono::system_clock::from_time_t(std::mktime(&tm));
  return options;
}

std::string render_or_error(const std::string& source, const OrderedJson& context,
                            const engine::jinja::RenderOptions& options) {
  try {
    const auto parsed = engine::jinja::Template::parse(source);
    return parsed.render(globals_from_json(context, false), options).text;
  } catch (const engine::jinja::TemplateError& error) {
    return std::string("ERROR: ") + error.what();
  }
}

QString reference_dir() {
  return QStringLiteral(QUIRE_REFERENCE_DIR);
}

OrderedJson render_with_python(const OrderedJson& requests, QString& problem) {
  const QString python = QStringLiteral(QUIRE_PYTHON).isEmpty() ? QStringLiteral("/usr/bin/python3")
                                                                : QStringLiteral(QUIRE_PYTHON);
  const QString script = QDir(reference_dir()).filePath("render_chat_template.py");
  if (!QFileInfo::exists(script)) {
    problem = "the reference renderer " + script + " is missing";
    return {};
  }
  QProcess process;
  process.start(python, {script});
  if (!process.waitForStarted(30000)) {
    problem = "could not start " + python + ": " + process.errorString() +
              " (run scripts/setup-debian.sh to install python3-jinja2)";
    return {};
  }
  process.write(QByteArray::fromStdString(requests.dump()));
  process.closeWriteChannel();
  if (!process.waitForFinished(300000) || process.exitCode() != 0) {
    problem = python + " " + script +
              " failed: " + QString::fromUtf8(process.readAllStandardError()) +
              " (run scripts/setup-debian.sh to install python3-jinja2)";
    return {};
  }
  return OrderedJson::parse(process.readAllStandardOutput().toStdString());
}

}  // namespace quire::test
