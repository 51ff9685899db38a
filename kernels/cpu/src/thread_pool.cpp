#include "quire/kernels/cpu/thread_pool.h"

#include <algorithm>

namespace quire::kernels {

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void ThreadPool::run_chunks() {
  for (;;) {
    std::int64_t begin = 0;
    {
      std::lock_guard lock(mutex_);
      if (next_ >= count_ || error_) return;
      begin = next_;
      next_ = std::min(count_, next_ + chunk_);
    }
    try {
      (*body_)(begin, std::min(count_, begin + chunk_));
    } catch (...) {
      std::lock_guard lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
  }
}

void ThreadPool::worker_loop() {
  std::uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
      ++busy_;
    }
    run_chunks();
    {
      std::lock_guard lock(mutex_);
      --busy_;
    }
    done_.notify_all();
  }
}

void ThreadPool::parallel_for(std::int64_t count, std::int64_t grain,
                              const std::function<void(std::int64_t, std::int64_t)>& body) {
  if (count <= 0) return;
  grain = std::max<std::int64_t>(1, grain);
  const std::int64_t threads = size();
  if (threads == 1 || count <= grain) {
    body(0, count);
    return;
  }
  // A few chunks per thread balance uneven work without much locking.
  const std::int64_t chunk = std::max(grain, (count + 4 * threads - 1) / (4 * threads));
  {
    std::lock_guard lock(mutex_);
    body_ = &body;
    count_ = count;
    chunk_ = chunk;
    next_ = 0;
    error_ = nullptr;
    ++generation_;
  }
  wake_.notify_all();
  run_chunks();
  std::exception_ptr error;
  {
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return busy_ == 0 && (next_ >= count_ || error_); });
    // Workers that woke late find no chunk left and leave at once.
    body_ = nullptr;
    count_ = 0;
    error = error_;
  }
  if (error) std::rethrow_exception(error);
}

ThreadPool& default_thread_pool() {
  static ThreadPool pool;
  return pool;
}

}  // namespace quire::kernels
