// The shared main of GUI test executables: the same registry and command line
// as test_main.cpp, but with a QApplication, which widgets need. A GUI test
// executable links this file instead of test_main.cpp (see
// quire_add_gui_test in tests/CMakeLists.txt); both define main, so they
// never go into one executable together.

#include <QApplication>

#include "suite_runner.h"

int main(int argc, char** argv) {
  // Widgets in tests must look the same on every machine: a fixed style, not
  // whatever the desktop or the platform plugin would pick.
  QApplication::setStyle(QStringLiteral("Fusion"));
  QApplication app(argc, argv);
  return quire::test::run_registered_suites(argc, argv);
}
