#include "suite_runner.h"

#include <QCoreApplication>
#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>
#include <QTest>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "test_main.h"

namespace quire::test {
namespace {

std::vector<std::pair<QString, TestFactory>>& registry() {
  static std::vector<std::pair<QString, TestFactory>> tests;
  return tests;
}

// The suite in a child process of this executable, its output passed
// through; true if it passed.
bool run_in_child(const QString& name, int argc, char** argv) {
  QStringList arguments;
  for (int i = 1; i < argc; ++i)
    arguments << QString::fromLocal8Bit(argv[i]);
  QProcess child;
  QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
  environment.insert(QStringLiteral("QUIRE_TEST_CLASSES"), name);
  child.setProcessEnvironment(environment);
  child.setProcessChannelMode(QProcess::ForwardedChannels);
  std::fflush(stdout);
  std::fflush(stderr);
  child.start(QCoreApplication::applicationFilePath(), arguments);
  if (!child.waitForStarted(-1)) {
    std::fprintf(stderr, "FAIL!  : %s could not start a process for it: %s\n", qPrintable(name),
                 qPrintable(child.errorString()));
    return false;
  }
  child.waitForFinished(-1);
  if (child.exitStatus() != QProcess::NormalExit) {
    std::fprintf(stderr, "FAIL!  : %s crashed\n", qPrintable(name));
    return false;
  }
  return child.exitCode() == 0;
}

}  // namespace

int register_test(const char* name, TestFactory factory) {
  registry().emplace_back(QString::fromUtf8(name), std::move(factory));
  return static_cast<int>(registry().size());
}

int run_registered_suites(int argc, char** argv) {
  const QStringList only =
      qEnvironmentVariable("QUIRE_TEST_CLASSES").split(u',', Qt::SkipEmptyParts);
  std::vector<const std::pair<QString, TestFactory>*> chosen;
  for (const auto& entry : registry()) {
    if (only.isEmpty() || only.contains(entry.first)) chosen.push_back(&entry);
  }
  // A misspelt name must not pass by running nothing.
  for (const QString& name : only) {
    bool known = false;
    for (const auto& entry : registry())
      known = known || entry.first == name;
    if (!known) {
      std::fprintf(stderr, "QUIRE_TEST_CLASSES names %s, which this executable does not have\n",
                   qPrintable(name));
      return EXIT_FAILURE;
    }
  }
  if (chosen.size() == 1) {
    const std::unique_ptr<QObject> test = chosen.front()->second();
    return QTest::qExec(test.get(), argc, argv) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
  }
  int failures = 0;
  for (const auto* entry : chosen)
    failures += run_in_child(entry->first, argc, argv) ? 0 : 1;
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

}  // namespace quire::test
