#pragma once

#include <QTest>
#include <numeric>
#include <string>
#include <vector>

#include "quire/cache/page_cache.h"

namespace quire::test {

// `pages` pages of 4 tokens: few enough tokens that a test's arithmetic of
// pages and positions stays readable.
inline cache::CacheConfig small_cache(int pages, cache::ReservationPolicy reservation =
                                                     cache::ReservationPolicy::ReserveOnAdmission) {
  cache::CacheConfig config;
  config.page_size = 4;
  config.num_pages = pages;
  config.reservation = reservation;
  return config;
}

// Token ids start, start + 1, ..., start + count - 1.
inline std::vector<cache::TokenId> run_of(int count, int start) {
  std::vector<cache::TokenId> tokens(static_cast<std::size_t>(count));
  std::iota(tokens.begin(), tokens.end(), start);
  return tokens;
}

inline std::vector<cache::TokenId> joined(std::vector<cache::TokenId> a,
                                          const std::vector<cache::TokenId>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

inline std::vector<cache::PageIndex> table_of(const cache::PageCache& cache,
                                              cache::SequenceId sequence) {
  const auto table = cache.page_table(sequence);
  return {table.begin(), table.end()};
}

inline std::vector<cache::TokenId> tokens_of(const cache::PageCache& cache,
                                             cache::SequenceId sequence) {
  const auto tokens = cache.tokens(sequence);
  return {tokens.begin(), tokens.end()};
}

inline std::string invariant_report(const cache::PageCache& cache) {
  std::string text;
  for (const std::string& problem : cache.check_invariants())
    text += problem + "\n";
  return text;
}

}  // namespace quire::test

// Fails the test with every broken invariant listed.
#define QUIRE_VERIFY_INVARIANTS(cache)                                     \
  do {                                                                     \
    const std::string quire_report = quire::test::invariant_report(cache); \
    QVERIFY2(quire_report.empty(), quire_report.c_str());                  \
  } while (false)

#define QUIRE_VERIFY_EMPTY(text)                      \
  do {                                                \
    const std::string quire_text = (text);            \
    QVERIFY2(quire_text.empty(), quire_text.c_str()); \
  } while (false)
