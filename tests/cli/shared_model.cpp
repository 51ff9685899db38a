#include "shared_model.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include "cli_run.h"

namespace cli_test {

QString make_exl2_model(const QString& dir) {
  const QString model = dir + QStringLiteral("/exl2");
  const Run made =
      run_cli({QStringLiteral("make-model"), model, QStringLiteral("--format"),
               QStringLiteral("exl2:4.0"), QStringLiteral("--seed"), QStringLiteral("5")});
  if (made.exit_code != 0) {
    qWarning("make-model failed (%d): %s", made.exit_code, qPrintable(made.err));
    return {};
  }
  return model;
}

QString write_ten_turn_script(const QString& dir) {
  QJsonArray messages;
  for (int turn = 1; turn <= 10; ++turn) {
    messages.append(QStringLiteral("Turn %1: what happens to the pages of turn %2 now?")
                        .arg(turn)
                        .arg(turn - 1));
  }
  const QString path = dir + QStringLiteral("/ten-turns.json");
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly)) return {};
  file.write(QJsonDocument(QJsonObject{{QStringLiteral("system"), QStringLiteral("Be brief.")},
                                       {QStringLiteral("messages"), messages}})
                 .toJson());
  return path;
}

bool make_model_and_script(const QString& dir, QString* model, QString* script) {
  *model = make_exl2_model(dir);
  *script = write_ten_turn_script(dir);
  if (script->isEmpty())
    qWarning("the conversation script cannot be written in %s", qPrintable(dir));
  return !model->isEmpty() && !script->isEmpty();
}

}  // namespace cli_test
