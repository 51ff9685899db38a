#include "quire/engine/generator/draft_length.h"

#include <algorithm>

namespace quire::engine {

void DraftLength::record(int drafted, int accepted) {
  if (drafted <= 0) return;
  if (accepted >= drafted) {
    misses_ = 0;
    length_ = std::min(longest_, length_ + 1);
    return;
  }
  if (accepted > 0) {
    misses_ = 0;
    length_ = std::min(longest_, accepted + 1);
    return;
  }
  // A first miss only shortens the draft: at an acceptance rate worth
  // drafting for, single misses are common and pausing would waste the
  // steps after them.
  ++misses_;
  length_ = 1;
  paused_ = misses_ >= 8 ? kLongestPause : std::min(kLongestPause, (1 << (misses_ - 1)) - 1);
}

}  // namespace quire::engine
