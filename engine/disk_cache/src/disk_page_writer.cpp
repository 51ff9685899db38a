#include "quire/engine/disk_cache/disk_page_writer.h"

#include <stdexcept>

namespace quire::engine::disk_cache {

DiskPageWriter::DiskPageWriter(DiskPageStore& store, std::size_t queue_pages)
    : store_(store), capacity_(queue_pages) {
  if (queue_pages == 0)
    throw std::invalid_argument("disk cache writer: the queue must hold at least one page");
  thread_ = std::thread([this] { run(); });
}

DiskPageWriter::~DiskPageWriter() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

bool DiskPageWriter::write(PageToWrite page) {
  {
    const std::lock_guard lock(mutex_);
    if (status_.disk_full) {
      ++status_.dropped_disk_full;
      return false;
    }
    if (queue_.size() >= capacity_) {
      ++status_.dropped_queue_full;
      return false;
    }
    queue_.push_back(std::move(page));
  }
  wake_.notify_one();
  return true;
}

void DiskPageWriter::flush() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return queue_.empty() && !busy_; });
}

bool DiskPageWriter::pending(const cache::PageHash& hash) const {
  const std::lock_guard lock(mutex_);
  if (busy_ && current_ == hash) return true;
  for (const PageToWrite& page : queue_) {
    if (page.hash == hash) return true;
  }
  return false;
}

DiskWriterStatus DiskPageWriter::status() const {
  const std::lock_guard lock(mutex_);
  return status_;
}

void DiskPageWriter::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, with nothing left to write
    PageToWrite page = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    current_ = page.hash;
    lock.unlock();
    WriteOutcome outcome;
    try {
      outcome = store_.write(page.hash, page.parent, page.token_count, page.payload);
    } catch (const std::exception& error) {
      // A page the store cannot encode (a wrong size): that page fails, the
      // writer goes on.
      outcome.status = WriteStatus::Failed;
      outcome.message = error.what();
    }
    lock.lock();
    busy_ = false;
    switch (outcome.status) {
      case WriteStatus::Written:
        ++status_.written;
        break;
      case WriteStatus::AlreadyStored:
        ++status_.already_stored;
        break;
      case WriteStatus::TooLarge:
        ++status_.too_large;
        break;
      case WriteStatus::Failed:
        ++status_.failed;
        status_.last_error = outcome.message;
        break;
      case WriteStatus::DiskFull:
        status_.disk_full = true;
        status_.notice = std::string(kDiskFullNotice);
        status_.last_error = outcome.message;
        // This page and every queued one are dropped.
        status_.dropped_disk_full += 1 + queue_.size();
        queue_.clear();
        break;
    }
    if (queue_.empty()) idle_.notify_all();
  }
}

}  // namespace quire::engine::disk_cache
