#pragma once

// Runs the built quire-cli as a child process, as a user would, for the CLI
// tests.

#include <QByteArray>
#include <QJsonObject>
#include <QString>
#include <QStringList>
#include <vector>

namespace cli_test {

struct Run {
  int exit_code = -1;  // -1 when the program did not start or crashed
  QByteArray out;
  QString err;
};

// Waits up to ten minutes (a benchmark on a slow CI machine) for the program.
Run run_cli(const QStringList& arguments);

// A file's bytes (empty when it cannot be read), and its JSON object.
QByteArray file_bytes(const QString& path);
QJsonObject json_file(const QString& path);

// `quire-cli logits DIR --tokens TOKENS`: the last position's logits; empty
// when the command fails.
std::vector<double> last_logits(const QString& dir, const QString& tokens);

// The largest difference between two rows of logits relative to the
// reference's largest magnitude; a huge value when the rows differ in length.
double relative_logit_error(const std::vector<double>& reference, const std::vector<double>& other);

}  // namespace cli_test
