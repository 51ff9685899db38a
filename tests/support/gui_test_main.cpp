// The shared main of GUI test executables: the same registry and command line
// as test_main.cpp, but with a QApplication, which widgets need. A GUI test
// executable links this file instead of test_main.cpp (see
// quire_add_gui_test in tests/CMakeLists.txt); both define the registry, so
// they never go into one executable together.

#include <QApplication>
#include <QList>
#include <QString>
#include <QTest>
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

}  // namespace

int register_test(const char* name, TestFactory factory) {
  registry().emplace_back(QString::fromUtf8(name), std::move(factory));
  return static_cast<int>(registry().size());
}

}  // namespace quire::test

int main(int argc, char** argv) {
  // Widgets in tests must look the same on every machine: a fixed style, not
  // whatever the desktop or the platform plugin would pick.
  QApplication::setStyle(QStringLiteral("Fusion"));
  QApplication app(argc, argv);
  const QStringList only =
      qEnvironmentVariable("QUIRE_TEST_CLASSES").split(u',', Qt::SkipEmptyParts);
  int failures = 0;
  for (const auto& [name, factory] : quire::test::registry()) {
    if (!only.isEmpty() && !only.contains(name)) continue;
    const std::unique_ptr<QObject> test = factory();
    failures += QTest::qExec(test.get(), argc, argv) != 0 ? 1 : 0;
  }
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
