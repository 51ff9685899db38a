#include "cli_run.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <algorithm>
#include <cmath>

namespace cli_test {

Run run_cli(const QStringList& arguments) {
  QProcess process;
  process.start(QStringLiteral(QUIRE_CLI_PATH), arguments);
  if (!process.waitForStarted()) return {};
  process.waitForFinished(600000);
  return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
          process.readAllStandardOutput(), QString::fromUtf8(process.readAllStandardError())};
}

QByteArray file_bytes(const QString& path) {
  QFile file(path);
  return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

QJsonObject json_file(const QString& path) {
  return QJsonDocument::fromJson(file_bytes(path)).object();
}

std::vector<double> last_logits(const QString& dir, const QString& tokens) {
  const Run run = run_cli({QStringLiteral("logits"), dir, QStringLiteral("--tokens"), tokens});
  if (run.exit_code != 0) return {};
  const QJsonArray row =
      QJsonDocument::fromJson(run.out).object()[u"logits"].toArray().first().toArray();
  std::vector<double> values;
  for (const QJsonValue value : row)
    values.push_back(value.toDouble());
  return values;
}

double relative_logit_error(const std::vector<double>& reference,
                            const std::vector<double>& other) {
  if (reference.empty() || other.size() != reference.size()) return 1e9;
  double largest = 0.0, difference = 0.0;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    largest = std::max(largest, std::abs(reference[i]));
    difference = std::max(difference, std::abs(reference[i] - other[i]));
  }
  return difference / largest;
}

}  // namespace cli_test
