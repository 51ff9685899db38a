#pragma once

namespace quire::engine {

// How many tokens a job drafts in its next step. Verifying a draft costs a
// row of every product and of attention, so the length follows what the
// model accepts: it grows by one after a step that kept every draft, falls
// to one more than was kept after a step that kept some, and after steps
// that kept none the job stops drafting for a while, twice as long after
// each such step in a row (up to kLongestPause steps). A job whose drafts
// are always rejected then verifies one draft in about every
// kLongestPause + 1 steps, which costs next to nothing over not drafting,
// and still notices when its text turns repetitive.
class DraftLength {
 public:
  static constexpr int kLongestPause = 64;

  // `longest`: the most tokens a step may draft (DraftSettings::max_tokens).
  explicit DraftLength(int longest) : longest_(longest), length_(longest) {}

  // The drafts to ask for in this step; 0 while paused (which uses up one
  // paused step).
  int next() {
    if (paused_ > 0) {
      --paused_;
      return 0;
    }
    return length_;
  }
  // What a step that verified `drafted` drafts kept.
  void record(int drafted, int accepted);

  int length() const { return length_; }
  int paused() const { return paused_; }

 private:
  int longest_;
  int length_;
  int paused_ = 0;
  int misses_ = 0;  // steps in a row that kept no draft
};

}  // namespace quire::engine
