#include "quire/kernels/cpu/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace quire::kernels {
namespace {

// How long a thread polls before it sleeps: longer than the gap between two
// loops of a decode step, short enough that an idle engine stops using the
// processor at once.
constexpr std::chrono::microseconds kSpin{250};

// Chunks per thread a loop is cut into where its grain allows: small enough
// that the threads finish together (a decode step's loops are tens of
// microseconds, often a few dozen EXL2 slices). The caller takes chunks from
// the front and the workers from the back, so each still works through
// neighbouring ones; handed out in turn, chunks this small made the EXL2
// products slower than four larger ones per thread, and from both ends ~6%
// faster.
constexpr std::int64_t kChunksPerThread = 16;

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
  // The claim word holds at most kIndexMask chunks.
  threads = static_cast<int>(std::min<std::int64_t>(threads, kIndexMask / kChunksPerThread));
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

void ThreadPool::run_chunks(std::uint32_t loop, bool from_front) {
  std::uint64_t claim = claim_.load(std::memory_order_acquire);
  for (;;) {
    // A loop that has ended, or one taken completely: nothing left here.
    if (loop_of(claim) != loop) return;
    const std::uint64_t front = (claim >> kIndexBits) & kIndexMask;
    const std::uint64_t back = claim & kIndexMask;
    if (front >= back) return;
    const std::uint64_t taken = from_front ? claim + (std::uint64_t(1) << kIndexBits) : claim - 1;
    if (!claim_.compare_exchange_weak(claim, taken, std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
      continue;
    }
    // The chunk is ours, and the loop cannot end before it has finished, so
    // its description stays as it is until then.
    const std::int64_t chunks = chunks_;
    const std::int64_t index = static_cast<std::int64_t>(from_front ? front : back - 1);
    const std::int64_t begin = index * chunk_;
    if (!failed_.load(std::memory_order_relaxed)) {
      try {
        (*body_)(begin, std::min(count_, begin + chunk_));
      } catch (...) {
        std::lock_guard lock(error_mutex_);
        if (!error_) error_ = std::current_exception();
        failed_ = true;
      }
    }
    // The last chunk wakes a caller that has gone to sleep. Both sides store
    // before they load (sequentially consistent), so either the caller sees
    // the count or this thread sees the caller asleep.
    if (finished_.fetch_add(1) + 1 == chunks && caller_sleeping_.load()) {
      { std::lock_guard lock(mutex_); }
      done_.notify_all();
    }
    claim = claim_.load(std::memory_order_acquire);
  }
}

void ThreadPool::worker_loop() {
  std::uint32_t served = 0;  // no loop has number 0
  const auto announced = [&] { return stopping_.load() || loop_of(claim_.load()) != served; };
  for (;;) {
    if (!poll(announced)) {
      std::unique_lock lock(mutex_);
      // Counted before the check inside wait, which pairs with the caller's
      // store of claim_ and load of this count.
      ++sleeping_workers_;
      wake_.wait(lock, announced);
      --sleeping_workers_;
    }
    if (stopping_) return;
    served = loop_of(claim_.load(std::memory_order_acquire));
    run_chunks(served, false);
  }
}

bool ThreadPool::loop_finished() const {
  return finished_.load() == chunks_;
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
  const std::int64_t most = kChunksPerThread * threads;
  chunk_ = std::max(grain, (count + most - 1) / most);
  chunks_ = (count + chunk_ - 1) / chunk_;
  body_ = &body;
  count_ = count;
  finished_.store(0, std::memory_order_relaxed);
  failed_.store(false, std::memory_order_relaxed);
  error_ = nullptr;
  loops_ = (loops_ + 1) & static_cast<std::uint32_t>((std::uint64_t(1) << 24) - 1);
  if (loops_ == 0) loops_ = 1;
  const std::uint32_t loop = loops_;
  claim_.store((std::uint64_t(loop) << (2 * kIndexBits)) | static_cast<std::uint64_t>(chunks_));
  if (sleeping_workers_.load() > 0) {
    // Taking the lock once means a worker is either before its check (and
    // sees the loop) or waiting (and is woken).
    { std::lock_guard lock(mutex_); }
    wake_.notify_all();
  }
  run_chunks(loop, true);
  if (!poll([&] { return loop_finished(); })) {
    std::unique_lock lock(mutex_);
    caller_sleeping_ = true;
    done_.wait(lock, [&] { return loop_finished(); });
    caller_sleeping_ = false;
  }
  body_ = nullptr;
  // Every chunk has finished, so no thread writes error_ any more.
  const std::exception_ptr error = std::exchange(error_, nullptr);
  if (error) std::rethrow_exception(error);
}

ThreadPool& default_thread_pool() {
  static ThreadPool pool;
  return pool;
}

}  // namespace quire::kernels
