#include <QString>
#include <QTest>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <vector>

#include "quire/kernels/cpu/thread_pool.h"
#include "test_main.h"

using quire::kernels::ThreadPool;

namespace {

// Runs one loop over [0, count) and returns how often each index was visited.
std::vector<int> visits(ThreadPool& pool, std::int64_t count, std::int64_t grain) {
  std::vector<std::atomic<int>> seen(static_cast<std::size_t>(count));
  pool.parallel_for(count, grain, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i)
      ++seen[static_cast<std::size_t>(i)];
  });
  std::vector<int> result;
  for (const std::atomic<int>& s : seen)
    result.push_back(s.load());
  return result;
}

}  // namespace

class ThreadPoolTest : public QObject {
  Q_OBJECT

 private slots:
  // Thousands of short loops back to back, as in a decode step, each covering
  // its range exactly once, whatever the size and grain.
  void everyIndexRunsExactlyOnceInManyShortLoops() {
    ThreadPool pool(3);
    for (int round = 0; round < 3000; ++round) {
      const std::int64_t count = 1 + round % 97;
      const std::int64_t grain = 1 + round % 5;
      const std::vector<int> seen = visits(pool, count, grain);
      for (std::int64_t i = 0; i < count; ++i) {
        if (seen[std::size_t(i)] != 1) {
          QFAIL(qPrintable(QString("round %1: index %2 of %3 ran %4 times")
                               .arg(round)
                               .arg(i)
                               .arg(count)
                               .arg(seen[std::size_t(i)])));
        }
      }
    }
  }

  // A worker takes the chunks the caller has not reached: each of the two
  // chunks waits until both have started, which only two threads can do.
  void aWorkerTakesChunksWhileTheCallerWorks() {
    ThreadPool pool(2);
    for (int round = 0; round < 20; ++round) {
      std::atomic<int> started{0};
      std::atomic<bool> alone{false};
      pool.parallel_for(2, 1, [&](std::int64_t, std::int64_t) {
        ++started;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (started.load() < 2) {
          if (std::chrono::steady_clock::now() > deadline) {
            alone = true;
            return;
          }
          std::this_thread::yield();
        }
      });
      QVERIFY2(!alone.load(),
               qPrintable(QString("round %1: one thread ran both chunks").arg(round)));
    }
  }

  // Long ranges are cut into a few large chunks; every index still runs once.
  void aLongRangeRunsEveryIndexOnce() {
    ThreadPool pool(2);
    const std::vector<int> seen = visits(pool, 1'000'003, 1);
    QCOMPARE(std::count(seen.begin(), seen.end(), 1), std::ptrdiff_t(1'000'003));
  }

  // Workers that have gone to sleep (idle longer than they poll) wake for the
  // next loop.
  void workersWakeAfterSleeping() {
    ThreadPool pool(2);
    for (int round = 0; round < 3; ++round) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const std::vector<int> seen = visits(pool, 1000, 1);
      QCOMPARE(std::accumulate(seen.begin(), seen.end(), 0), 1000);
    }
  }

  // The first exception of a loop reaches the caller, and the pool runs the
  // next loop normally.
  void anExceptionReachesTheCallerAndThePoolGoesOn() {
    ThreadPool pool(2);
    bool thrown = false;
    try {
      pool.parallel_for(100, 1, [](std::int64_t begin, std::int64_t) {
        if (begin == 0) throw std::runtime_error("chunk failed");
      });
    } catch (const std::runtime_error& error) {
      thrown = true;
      QCOMPARE(QString(error.what()), QString("chunk failed"));
    }
    QVERIFY(thrown);
    const std::vector<int> seen = visits(pool, 100, 1);
    QCOMPARE(std::accumulate(seen.begin(), seen.end(), 0), 100);
  }

  // Two threads sharing one pool (the engine thread and a test, say) take
  // turns; neither loop loses or repeats an index.
  void callersFromTwoThreadsTakeTurns() {
    ThreadPool pool(2);
    std::atomic<int> wrong{0};
    auto caller = [&] {
      for (int round = 0; round < 500; ++round) {
        const std::vector<int> seen = visits(pool, 64, 1);
        for (const int s : seen)
          if (s != 1) ++wrong;
      }
    };
    std::thread other(caller);
    caller();
    other.join();
    QCOMPARE(wrong.load(), 0);
  }
};

QUIRE_TEST(ThreadPoolTest)
#include "test_thread_pool.moc"
