#include "quire/engine/grammar/token_matcher.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "grammar_impl.h"
#include "plain_runs.h"
#include "state_space.h"

namespace quire::engine::grammar {

class MatcherState {
 public:
  MatcherState(std::shared_ptr<const Grammar> compiled,
               std::shared_ptr<const TokenVocabulary> tokens)
      : grammar(std::move(compiled)),
        vocabulary(std::move(tokens)),
        space(grammar->automaton()),
        plain_runs(space, vocabulary->longest_plain_token()),
        current(space.initial()),
        depth_states(vocabulary->trie().max_depth + 1) {}

  // Masks kept per state before the cache is emptied: 256 masks of Llama 3's
  // vocabulary are 4 MiB.
  static constexpr std::size_t kMaxCachedMasks = 256;
  // Each state holds a 1 KiB transition row, and long replies under deep or
  // bounded grammars keep adding states; past this many (20 MiB of rows),
  // reset() starts the state space afresh.
  static constexpr std::size_t kMaxStatesKept = 20'000;

  void compute_mask(std::span<std::uint32_t> mask) {
    // Inside a string the plain tokens come by length from a precomputed
    // mask and only the others are walked; elsewhere the whole trie is.
    const int plain = plain_runs.run(current);
    if (plain >= 0) {
      const auto plain_mask = vocabulary->plain_mask(plain);
      std::copy(plain_mask.begin(), plain_mask.end(), mask.begin());
      walk(vocabulary->structural_trie(), mask);
    } else {
      std::fill(mask.begin(), mask.end(), 0u);
      walk(vocabulary->trie(), mask);
    }
    if (space.accepting(current)) {
      for (const std::int32_t id : vocabulary->eos())
        mask[static_cast<std::size_t>(id) / 32] |= 1u << (id % 32);
    }
  }

  // Sets the tokens of `trie` whose bytes the grammar takes from `current`,
  // skipping a node's whole subtree at the first byte it rejects.
  void walk(const VocabularyTrie& trie, std::span<std::uint32_t> mask) {
    const TrieNode* nodes = trie.nodes.data();
    const std::uint32_t* tokens = trie.tokens.data();
    StateId* states = depth_states.data();
    states[0] = current;
    const std::size_t count = trie.nodes.size();
    for (std::size_t i = 0; i < count;) {
      const TrieNode& node = nodes[i];
      const StateId next = space.next(states[node.depth - 1], node.byte);
      if (next == kDeadState) {
        i = node.subtree_end;
        continue;
      }
      states[node.depth] = next;
      for (std::uint32_t t = 0; t < node.token_count; ++t) {
        const std::uint32_t id = tokens[node.first_token + t];
        mask[id / 32] |= 1u << (id % 32);
      }
      ++i;
    }
  }

  std::shared_ptr<const Grammar> grammar;
  std::shared_ptr<const TokenVocabulary> vocabulary;
  StateSpace space;
  PlainRuns plain_runs;
  StateId current;
  bool finished = false;
  std::vector<StateId> depth_states;
  std::unordered_map<StateId, std::vector<std::uint32_t>> masks;
};

TokenMatcher::TokenMatcher(std::shared_ptr<const Grammar> grammar,
                           std::shared_ptr<const TokenVocabulary> vocabulary) {
  if (!grammar || !vocabulary)
    throw std::invalid_argument("TokenMatcher needs a grammar and a vocabulary");
  state_ = std::make_unique<MatcherState>(std::move(grammar), std::move(vocabulary));
}

TokenMatcher::TokenMatcher(TokenMatcher&&) noexcept = default;
TokenMatcher& TokenMatcher::operator=(TokenMatcher&&) noexcept = default;
TokenMatcher::~TokenMatcher() = default;

std::size_t TokenMatcher::mask_words() const {
  return state_->vocabulary->mask_words();
}

void TokenMatcher::allowed_tokens(std::span<std::uint32_t> mask) {
  MatcherState& s = *state_;
  if (mask.size() != mask_words()) {
    throw std::invalid_argument("the token mask has " + std::to_string(mask.size()) +
                                " words; the vocabulary needs " + std::to_string(mask_words()));
  }
  if (s.finished) {
    std::fill(mask.begin(), mask.end(), 0u);
    return;
  }
  if (const auto it = s.masks.find(s.current); it != s.masks.end()) {
    std::memcpy(mask.data(), it->second.data(), mask.size_bytes());
    return;
  }
  s.compute_mask(mask);
  if (s.masks.size() >= MatcherState::kMaxCachedMasks) s.masks.clear();
  s.masks.emplace(s.current, std::vector<std::uint32_t>(mask.begin(), mask.end()));
}

bool TokenMatcher::accept(std::int32_t token) {
  MatcherState& s = *state_;
  if (s.finished || token < 0 || token >= s.vocabulary->size()) return false;
  if (s.vocabulary->is_eos(token)) {
    if (!s.space.accepting(s.current)) return false;
    s.finished = true;
    return true;
  }
  const std::string& bytes = s.vocabulary->bytes(token);
  return !bytes.empty() && accept_bytes(bytes);
}

bool TokenMatcher::accept_bytes(std::string_view bytes) {
  MatcherState& s = *state_;
  if (s.finished) return false;
  StateId state = s.current;
  for (const char c : bytes) {
    state = s.space.next(state, static_cast<std::uint8_t>(c));
    if (state == kDeadState) return false;
  }
  s.current = state;
  return true;
}

bool TokenMatcher::allows_bytes(std::string_view bytes) {
  MatcherState& s = *state_;
  if (s.finished) return false;
  StateId state = s.current;
  for (const char c : bytes) {
    state = s.space.next(state, static_cast<std::uint8_t>(c));
    if (state == kDeadState) return false;
  }
  return true;
}

bool TokenMatcher::is_accepting() const {
  return !state_->finished && state_->space.accepting(state_->current);
}

bool TokenMatcher::is_finished() const {
  return state_->finished;
}

void TokenMatcher::reset() {
  MatcherState& s = *state_;
  if (s.space.state_count() > MatcherState::kMaxStatesKept) {
    s.space.clear();
    s.plain_runs.clear();
    s.masks.clear();
  }
  s.current = s.space.initial();
  s.finished = false;
}

}  // namespace quire::engine::grammar
