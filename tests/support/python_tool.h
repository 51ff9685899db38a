#pragma once

// Runs one of tests/tools' Python reference scripts with the Python found at
// configure time (QUIRE_PYTHON and QUIRE_TEST_TOOLS_DIR come from
// quire_add_test, so this stays a header). Returns "" when the script ran
// and exited 0, otherwise what went wrong with its error output.

#include <QProcess>
#include <QString>
#include <QStringList>

namespace quire::test {

inline QString run_python_tool(const QString& script, const QStringList& arguments, int timeout_ms,
                               const QString& packages_needed) {
  const QString python = QStringLiteral(QUIRE_PYTHON);
  if (python.isEmpty()) return QStringLiteral("Python was not found at configure time");
  QProcess process;
  process.start(python, QStringList{QStringLiteral(QUIRE_TEST_TOOLS_DIR "/") + script} + arguments);
  if (!process.waitForFinished(timeout_ms)) return script + QStringLiteral(" did not finish");
  if (process.exitStatus() != QProcess::NormalExit || process.exitCode() != 0)
    return script +
           QStringLiteral(" failed (it needs %1; scripts/setup-debian.sh installs them):\n")
               .arg(packages_needed) +
           QString::fromUtf8(process.readAllStandardError());
  return {};
}

}  // namespace quire::test
