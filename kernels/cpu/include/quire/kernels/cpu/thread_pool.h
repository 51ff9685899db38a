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
// then sleep on a condition variable.
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
  void worker_loop();
  void run_chunks();
  bool loop_finished() const;

  std::vector<std::thread> workers_;
  std::mutex caller_;  // one loop at a time
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  // Changed under mutex_; also read without it while polling.
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<bool> stopping_{false};

  // The loop in progress, changed under mutex_.
  const std::function<void(std::int64_t, std::int64_t)>* body_ = nullptr;
  std::int64_t count_ = 0;
  std::int64_t chunk_ = 1;
  std::atomic<std::int64_t> next_{0};
  std::atomic<int> busy_{0};
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;
};

// The process-wide pool the CPU backend uses.
ThreadPool& default_thread_pool();

}  // namespace quire::kernels
