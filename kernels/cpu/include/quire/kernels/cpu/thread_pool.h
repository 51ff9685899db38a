#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace quire::kernels {

// A fixed set of worker threads for data-parallel loops. The calling thread
// takes part in every loop, so a pool of size 1 runs everything inline.
//
// A decode step runs about a hundred short loops one after another, each a
// fraction of a millisecond. Waking a sleeping thread takes tens of
// microseconds (more in a virtual machine), so between loops the workers, and
// the caller waiting for them, first poll for a short while (kSpin) and only
// then sleep on a condition variable. Within a loop, threads take chunks
// with one atomic operation and no lock: a loop costs about a microsecond
// more than its work, so chunks can be small enough to keep both threads of
// a decode step busy to the end.
class ThreadPool {
 public:
  // threads <= 0: one per hardware thread.
  explicit ThreadPool(int threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls body(begin, end) on disjoint chunks covering [0, count), each at
  // least `grain` long (except the last), and returns when all are done. The
  // first exception thrown by a chunk is rethrown here. Calls from different
  // threads run one after the other. Not reentrant: a body must not call
  // parallel_for on the same pool.
  void parallel_for(std::int64_t count, std::int64_t grain,
                    const std::function<void(std::int64_t, std::int64_t)>& body);

 private:
  // The loop in progress and the chunks left, in one word, so that a thread
  // takes a chunk with one compare-and-swap and can never take one of a loop
  // that has ended: the loop's number (low 24 bits of its count), then the
  // first chunk not taken from the front and the end of those not taken from
  // the back, 20 bits each.
  static constexpr int kIndexBits = 20;
  static constexpr std::uint64_t kIndexMask = (std::uint64_t(1) << kIndexBits) - 1;
  static std::uint32_t loop_of(std::uint64_t claim) {
    return static_cast<std::uint32_t>(claim >> (2 * kIndexBits));
  }

  void worker_loop();
  // Runs chunks of loop `loop` until none is left to take: the caller's
  // from the front, the workers' from the back, so that each thread works
  // through neighbouring chunks (consecutive slices of a weight) and they
  // meet wherever the work evens out.
  void run_chunks(std::uint32_t loop, bool from_front);
  bool loop_finished() const;

  std::vector<std::thread> workers_;
  std::mutex caller_;  // one loop at a time
  // Sleeping and waking only; the loop itself needs no lock.
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::atomic<int> sleeping_workers_{0};
  std::atomic<bool> caller_sleeping_{false};
  std::atomic<bool> stopping_{false};

  std::atomic<std::uint64_t> claim_{0};
  std::uint32_t loops_ = 0;  // the caller's count of loops
  // The loop in progress: written before claim_ announces it, and not changed
  // until every chunk has finished.
  const std::function<void(std::int64_t, std::int64_t)>* body_ = nullptr;
  std::int64_t count_ = 0;
  std::int64_t chunk_ = 1;
  std::int64_t chunks_ = 0;
  std::atomic<std::int64_t> finished_{0};
  std::atomic<bool> failed_{false};
  std::mutex error_mutex_;
  std::exception_ptr error_;
};

// The process-wide pool the CPU backend uses.
ThreadPool& default_thread_pool();

}  // namespace quire::kernels
