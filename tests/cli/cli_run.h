#pragma once

// Runs the built quire-cli as a child process, as a user would, for the CLI
// tests.

#include <QByteArray>
#include <QString>
#include <QStringList>

namespace cli_test {

struct Run {
  int exit_code = -1;  // -1 when the program did not start or crashed
  QByteArray out;
  QString err;
};

// Waits up to ten minutes (a benchmark on a slow CI machine) for the program.
Run run_cli(const QStringList& arguments);

}  // namespace cli_test
