// The shared main of test executables: each test source registers its
// suite with QUIRE_TEST (test_main.h), and suite_runner.cpp runs them.

#include <QCoreApplication>

#include "suite_runner.h"

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  return quire::test::run_registered_suites(argc, argv);
}
