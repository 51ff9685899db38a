// The trellis search that codes EXL3 tiles: on streams short enough to try
// every one of them, the path through a given node is the best of all
// streams that end in it; on a whole tile, the states it returns are those a
// decoder reads back from the packed tile.

#include <QTest>
#include <cmath>
#include <random>
#include <vector>

#include "quire/engine/formats/exl3_trellis_search.h"
#include "quire/engine/formats/exl3_writer.h"
#include "quire/kernels/cpu/exl3_trellis.h"
#include "test_main.h"

using namespace quire::engine::formats;
using quire::kernels::Exl3Codebook;

namespace {

// Every tail-biting stream of positions * bits bits, scored: the least
// squared error of all, and of those whose last state ends in each node.
struct BruteForce {
  double best = 0.0;
  std::uint32_t best_node = 0;
  std::vector<double> best_by_node;
};

BruteForce brute_force(const std::vector<float>& targets, int bits, Exl3Codebook codebook) {
  const float* values = quire::kernels::exl3_codebook_table(codebook);
  const int positions = static_cast<int>(targets.size());
  const int length = positions * bits;
  const std::uint32_t node_mask = (1u << (16 - bits)) - 1u;
  BruteForce result;
  result.best_by_node.assign(std::size_t(node_mask) + 1, INFINITY);
  result.best = INFINITY;
  for (std::uint64_t stream = 0; stream < (std::uint64_t{1} << length); ++stream) {
    // The stream twice over, so that every state is a window of 16 bits:
    // position t's ends at stream bit (t + 1) bits, most significant first.
    const std::uint64_t doubled = (stream << length) | stream;
    double error = 0.0;
    std::uint32_t state = 0;
    for (int t = 0; t < positions; ++t) {
      const int end = (t + 1) * bits;
      state = static_cast<std::uint32_t>(doubled >> (length - end)) & 0xffffu;
      const double difference = double(values[state]) - double(targets[std::size_t(t)]);
      error += difference * difference;
    }
    const std::uint32_t node = state & node_mask;
    result.best_by_node[node] = std::min(result.best_by_node[node], error);
    if (error < result.best) {
      result.best = error;
      result.best_node = node;
    }
  }
  return result;
}

// Consecutive states share 16 - bits bits, around the end too.
bool tail_biting(const std::vector<std::uint16_t>& states, int bits) {
  for (std::size_t t = 0; t < states.size(); ++t) {
    const std::uint32_t previous = states[(t + states.size() - 1) % states.size()];
    const std::uint32_t mask = (1u << bits) - 1u;
    if (((previous << bits) | (states[t] & mask)) % 65536u != states[t]) return false;
  }
  return true;
}

}  // namespace

class Exl3TrellisSearchTest : public QObject {
  Q_OBJECT

 private slots:
  // Every width of vectors this processor runs (the step is written three
  // times: 4, 8 and 16 floats).
  void pathThroughANodeIsTheBestOfAllStreams_data() {
    QTest::addColumn<int>("bits");
    QTest::addColumn<int>("positions");
    QTest::addColumn<int>("codebook_index");
    QTest::addColumn<int>("lanes");
    for (const int lanes : {4, 8, 16}) {
      try {
        Exl3TrellisSearch probe(8, Exl3Codebook::mul1, lanes);
      } catch (const std::invalid_argument&) {
        continue;
      }
      const auto row = [&](int bits, int positions, Exl3Codebook codebook, const char* name) {
        QTest::addRow("%d bits, %s, %d lanes", bits, name, lanes)
            << bits << positions << int(codebook) << lanes;
      };
      // Streams of 16 to 21 bits: up to two million to try.
      row(1, 18, Exl3Codebook::mul1, "MUL1");
      row(2, 9, Exl3Codebook::three_inst, "3INST");
      row(3, 6, Exl3Codebook::mcg, "MCG");
      row(4, 5, Exl3Codebook::mul1, "MUL1");
      row(5, 4, Exl3Codebook::mcg, "MCG");
      row(6, 3, Exl3Codebook::mul1, "MUL1");
      row(7, 3, Exl3Codebook::three_inst, "3INST");
      row(8, 2, Exl3Codebook::mul1, "MUL1");
    }
  }
  void pathThroughANodeIsTheBestOfAllStreams() {
    QFETCH(int, bits);
    QFETCH(int, positions);
    QFETCH(int, codebook_index);
    QFETCH(int, lanes);
    const auto codebook = static_cast<Exl3Codebook>(codebook_index);
    std::mt19937 rng(std::uint32_t(bits * 31 + positions));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> targets(std::size_t(positions), 0.0f);
    for (float& target : targets)
      target = normal(rng);
    const BruteForce brute = brute_force(targets, bits, codebook);

    Exl3TrellisSearch search(bits, codebook, lanes);
    std::vector<std::uint16_t> states(targets.size());
    std::vector<float> decoded(targets.size());
    std::uniform_int_distribution<std::uint32_t> any_node(0, (1u << (16 - bits)) - 1u);
    for (const std::uint32_t node : {brute.best_node, any_node(rng), any_node(rng)}) {
      const double error = search.encode_through(targets, node, states, decoded);
      const double expected = brute.best_by_node[node];
      // The search adds in float, the brute force in double: near-ties may
      // differ in the last bits.
      QVERIFY2(
          std::abs(error - expected) <= 1e-5 * expected + 1e-9,
          qPrintable(
              QStringLiteral("node %1: %2, brute force %3").arg(node).arg(error).arg(expected)));
      QVERIFY(tail_biting(states, bits));
      QCOMPARE(std::uint32_t(states.back()) & ((1u << (16 - bits)) - 1u), node);
      for (std::size_t t = 0; t < states.size(); ++t)
        QCOMPARE(decoded[t], quire::kernels::exl3_codebook_value(states[t], codebook));
    }
    // encode() picks its node from the middle and keeps to it.
    const double error = search.encode(targets, states, decoded);
    QVERIFY(tail_biting(states, bits));
    QVERIFY(error >= brute.best * (1.0 - 1e-5));
    QCOMPARE(error,
             search.encode_through(targets, search.middle_start_node(targets), states, decoded));
  }

  // A whole tile: packing its symbols gives a tile from which the decoder
  // reads the same states, at every width.
  void tileStatesReadBackFromThePackedTile() {
    std::mt19937 rng(5);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> targets(256);
    for (int bits = 1; bits <= 8; ++bits) {
      for (float& target : targets)
        target = normal(rng);
      Exl3TrellisSearch search(bits, Exl3Codebook::mul1);
      std::vector<std::uint16_t> states(256), symbols(256);
      std::vector<float> decoded(256);
      search.encode(targets, states, decoded);
      for (int t = 0; t < 256; ++t)
        symbols[std::size_t(t)] = states[std::size_t(t)] & ((1 << bits) - 1);
      std::vector<std::uint16_t> tile(std::size_t(16 * bits));
      pack_exl3_tile(symbols, bits, tile.data());
      for (int t = 0; t < 256; ++t)
        QCOMPARE(quire::kernels::exl3_state(tile.data(), bits, t), std::uint32_t(states[t]));
    }
  }

  void rejectsStreamsShorterThanAState() {
    Exl3TrellisSearch search(4, Exl3Codebook::mcg);
    std::vector<float> targets(3, 0.5f), decoded(3);
    std::vector<std::uint16_t> states(3);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, search.encode(targets, states, decoded));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, Exl3TrellisSearch(9, Exl3Codebook::mcg));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, Exl3TrellisSearch(4, Exl3Codebook::mcg, 32));
  }
};

QUIRE_TEST(Exl3TrellisSearchTest)
#include "test_exl3_trellis_search.moc"
