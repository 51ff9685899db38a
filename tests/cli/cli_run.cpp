#include "cli_run.h"

#include <QProcess>

namespace cli_test {

Run run_cli(const QStringList& arguments) {
  QProcess process;
  process.start(QStringLiteral(QUIRE_CLI_PATH), arguments);
  if (!process.waitForStarted()) return {};
  process.waitForFinished(600000);
  return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
          process.readAllStandardOutput(), QString::fromUtf8(process.readAllStandardError())};
}

}  // namespace cli_test
