#pragma once

// The registry of Qt Test suites shared by test_main.cpp and
// gui_test_main.cpp, and the loop that runs them.

namespace quire::test {

// Runs the registered suites, or only those named by QUIRE_TEST_CLASSES
// (comma-separated), passing argv on to each; returns the process's exit
// code. A single suite runs in this process. Several run one after the
// other, each in a child process of this executable: once a suite skips in
// initTestCase, Qt Test (6.4) skips initTestCase of every later suite in the
// same process, so those would report nothing and pass without running.
int run_registered_suites(int argc, char** argv);

}  // namespace quire::test
