#pragma once

// Several Qt Test classes in one executable (one executable per area). Each
// test source registers its class with QUIRE_TEST(Class); the shared main runs
// them all, or only those named by QUIRE_TEST_CLASSES (comma-separated), each
// in a process of its own when there are several (suite_runner.h says why).

#include <QObject>
#include <functional>
#include <memory>

namespace quire::test {

using TestFactory = std::function<std::unique_ptr<QObject>()>;

int register_test(const char* name, TestFactory factory);

}  // namespace quire::test

#define QUIRE_TEST(Class)                                                           \
  namespace {                                                                       \
  [[maybe_unused]] const int quire_registered_##Class =                             \
      quire::test::register_test(#Class, [] { return std::make_unique<Class>(); }); \
  }
