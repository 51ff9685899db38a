#include "quire/kernels/cpu/thread_pool.h"

#include <algorithm>
#include <chrono>

namespace quire::kernels {
namespace {

// How long a thread polls before it sleeps: longer than the gap between two
// loops of a decode step, short enough that an idle engine stops using the
// processor at once.
constexpr std::chrono::microseconds kSpin{250};

void relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

// Polls `ready` until it returns true or kSpin has passed; true if it did.
template <typename Ready>
bool poll(const Ready& ready) {
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return true;
      relax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return ready();
  }
}

}  // namespace

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i < threads; ++i)
    workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& worker : workers_)
    worker.join();
}

void ThreadPool::run_chunks() {
  for (;;) {
    std::int64_t begin = 0;
    {
      std::lock_guard lock(mutex_);
      if (next_ >= count_ || failed_) return;
      begin = next_;
      next_ = std::min(count_, begin + chunk_);
    }
    try {
      (*body_)(begin, std::min(count_, begin + chunk_));
    } catch (...) {
      std::lock_guard lock(mutex_);
      if (!failed_) error_ = std::current_exception();
      failed_ = true;
    }
  }
}

void ThreadPool::worker_loop() {
  std::uint64_t seen = 0;
  for (;;) {
    poll([&] { return stopping_.load() || generation_.load() != seen; });
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

bool ThreadPool::loop_finished() const {
  return busy_.load() == 0 && (next_.load() >= count_ || failed_.load());
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
  std::lock_guard one_loop(caller_);
  // A few chunks per thread balance uneven work without much locking.
  const std::int64_t chunk = std::max(grain, (count + 4 * threads - 1) / (4 * threads));
  {
    std::lock_guard lock(mutex_);
    body_ = &body;
    count_ = count;
    chunk_ = chunk;
    next_ = 0;
    failed_ = false;
    error_ = nullptr;
    ++generation_;
  }
  // Costs no system call when every worker is still polling.
  wake_.notify_all();
  run_chunks();
  std::exception_ptr error;
  poll([&] { return loop_finished(); });
  {
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return loop_finished(); });
    // Workers that woke late find no chunk left and leave at once.
    body_ = nullptr;
    count_ = 0;
    error = error_;
    error_ = nullptr;
  }
  if (error) std::rethrow_exception(error);
}

ThreadPool& default_thread_pool() {
  static ThreadPool pool;
  return pool;
}

}  // namespace quire::kernels
