#include <QTest>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "linear_internal.h"
#include "linear_test_support.h"
#include "quire/kernels/cpu/linear.h"
#include "test_main.h"

using namespace quire::kernels;
using namespace quire::test;
using linear_detail::Exl2BatchPath;

namespace {

// Whole 32-row blocks in groups of every width, up to the 512-row limit of
// the integer tiles, 104 outputs (three 32-column tiles and one of 8).
const std::vector<std::pair<int, int>> kWholeBlocks = {{8, 32}, {6, 64}, {5, 32},  {4, 128},
                                                       {3, 32}, {2, 32}, {4, 512}, {8, 96}};

struct Batch {
  Exl2Fixture exl2;
  std::vector<float> x;   // [rows, K]
  std::vector<float> xp;  // the same in quantized order
  std::int64_t rows;
};

Batch make_batch(std::mt19937& rng, const std::vector<std::pair<int, int>>& plan,
                 std::int64_t out_features, std::int64_t q_columns, std::int64_t rows) {
  Batch batch{random_exl2(rng, plan, out_features, q_columns, true), {}, {}, rows};
  const std::int64_t in = batch.exl2.in_features;
  batch.x = random_inputs(rng, std::size_t(rows * in));
  batch.xp.resize(batch.x.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t k = 0; k < in; ++k)
      batch.xp[std::size_t(r * in + k)] =
          batch.x[std::size_t(r * in + batch.exl2.perm[std::size_t(k)])];
  }
  return batch;
}

std::vector<float> run(ThreadPool& pool, const Batch& batch, Exl2BatchPath path,
                       std::int64_t first_row = 0, std::int64_t rows = -1) {
  if (rows < 0) rows = batch.rows;
  const LinearWeight weight = batch.exl2.weight();
  const std::int64_t in = weight.in_features;
  std::vector<float> out(std::size_t(rows * weight.out_features), std::nanf(""));
  const linear_detail::Product product{
      batch.x.data() + first_row * in, rows, in, weight.out_features, nullptr, out.data()};
  linear_detail::exl2_batched_product(pool, product, std::get<Exl2Weight>(weight.format),
                                      batch.exl2.q_columns, batch.xp.data() + first_row * in, path);
  return out;
}

// Every output within 1e-5 of its terms' magnitude (FP32 sums) plus what
// 16-bit inputs may add: each input off by at most 1/65534 of the largest
// magnitude in its group and row, times |w|.
QString compare_with_reference(const Batch& batch, const std::vector<float>& out,
                               bool integer_inputs) {
  const LinearWeight weight = batch.exl2.weight();
  const std::int64_t in = weight.in_features;
  const std::int64_t n_out = weight.out_features;
  const std::vector<float> dense = dequantize(weight);
  const Reference reference = reference_product(batch.x, batch.rows, dense, n_out, in, {});
  for (std::int64_t r = 0; r < batch.rows; ++r) {
    std::vector<double> input_error(std::size_t(in), 0.0);
    for (const Exl2Group& group : batch.exl2.groups) {
      double largest = 0.0;
      for (int k = group.first_row; k < group.first_row + group.rows; ++k)
        largest = std::max(largest, std::fabs(double(batch.xp[std::size_t(r * in + k)])));
      for (int k = group.first_row; k < group.first_row + group.rows; ++k)
        input_error[std::size_t(batch.exl2.perm[std::size_t(k)])] =
            integer_inputs ? largest / 65534.0 : 0.0;
    }
    for (std::int64_t n = 0; n < n_out; ++n) {
      double slack = 0.0;
      for (std::int64_t k = 0; k < in; ++k)
        slack += input_error[std::size_t(k)] * std::fabs(double(dense[std::size_t(n * in + k)]));
      const std::size_t at = std::size_t(r * n_out + n);
      const double error = std::fabs(double(out[at]) - reference.values[at]);
      if (!(error <= 1e-5 * reference.magnitudes[at] + slack)) {
        return QStringLiteral("row %1 output %2: %3, expected %4 (slack %5)")
            .arg(r)
            .arg(n)
            .arg(double(out[at]), 0, 'g', 9)
            .arg(reference.values[at], 0, 'g', 9)
            .arg(slack);
      }
    }
  }
  return {};
}

// Whether the processor runs this path: integer_tiles takes the VNNI tiles,
// or the AVX2 ones where VNNI is missing.
bool path_runs(Exl2BatchPath path) {
  switch (path) {
    case Exl2BatchPath::integer_tiles:
      return linear_detail::exl2_batched_integer_supported() ||
             linear_detail::exl2_batched_integer_256_supported();
    case Exl2BatchPath::integer_tiles_256:
      return linear_detail::exl2_batched_integer_256_supported();
    default:
      return true;
  }
}

const char* path_name(Exl2BatchPath path) {
  switch (path) {
    case Exl2BatchPath::integer_tiles:
      return "integer";
    case Exl2BatchPath::integer_tiles_256:
      return "integer 256-bit";
    default:
      return "float";
  }
}

constexpr Exl2BatchPath kIntegerPaths[] = {Exl2BatchPath::integer_tiles,
                                           Exl2BatchPath::integer_tiles_256};

}  // namespace

class Exl2BatchedProductTest : public QObject {
  Q_OBJECT

  ThreadPool pool_{3};

 private slots:
  // Both tile kinds against the double-precision product of the dequantized
  // weights, for row counts around the blocks of 12 rows and 128-row items.
  void batchedPathsMatchTheDequantizedProduct_data() {
    QTest::addColumn<int>("path_index");
    QTest::addColumn<int>("rows");
    for (const Exl2BatchPath path : {Exl2BatchPath::float_tiles, Exl2BatchPath::integer_tiles,
                                     Exl2BatchPath::integer_tiles_256}) {
      for (const int rows : {17, 24, 35, 128, 2 * 128 + 11})
        QTest::addRow("%s, %d rows", path_name(path), rows) << int(path) << rows;
    }
  }

  void batchedPathsMatchTheDequantizedProduct() {
    QFETCH(int, path_index);
    QFETCH(int, rows);
    const auto path = static_cast<Exl2BatchPath>(path_index);
    if (!path_runs(path)) QSKIP("the processor lacks AVX2");
    std::mt19937 rng(static_cast<unsigned>(rows * 31 + path_index));
    // Padded: 100 outputs stored in 128 columns.
    for (const std::int64_t out : {104, 100}) {
      const Batch batch = make_batch(rng, kWholeBlocks, out, out == 100 ? 128 : 104, rows);
      const QString problem = compare_with_reference(batch, run(pool_, batch, path),
                                                     path != Exl2BatchPath::float_tiles);
      QVERIFY2(problem.isEmpty(), qPrintable(problem));
    }
  }

  // A row's outputs on the integer tiles are exact integer sums scaled the
  // same way whatever rows share its block of twelve or its 128-row item:
  // rows 5..44 computed apart give the bits they get among 60.
  void integerTilesGiveEachRowItsOwnBits() {
    if (!path_runs(Exl2BatchPath::integer_tiles)) QSKIP("the processor lacks AVX2");
    std::mt19937 rng(41);
    const Batch batch = make_batch(rng, kWholeBlocks, 104, 104, 60);
    for (const Exl2BatchPath path : kIntegerPaths) {
      if (!path_runs(path)) continue;
      const std::vector<float> all = run(pool_, batch, path);
      const std::vector<float> part = run(pool_, batch, path, 5, 40);
      QVERIFY(std::equal(part.begin(), part.end(), all.begin() + 5 * 104));
      ThreadPool single(1);
      QVERIFY(run(single, batch, path) == all);
    }
  }

  // The AVX2 tiles form the same integer sums as the VNNI tiles and scale
  // them with the same operations: the same bits, for row counts that leave
  // every remainder of their six-row and the VNNI tiles' twelve-row blocks.
  void avx2TilesGiveTheVnniTilesBits() {
    if (!linear_detail::exl2_batched_integer_supported() ||
        !linear_detail::exl2_batched_integer_256_supported()) {
      QSKIP("the processor lacks AVX-512 VNNI (or QUIRE_CPU_VECTOR_BITS caps it)");
    }
    std::mt19937 rng(43);
    for (const int rows : {17, 18, 19, 20, 21, 22, 23, 35, 140}) {
      const Batch batch = make_batch(rng, kWholeBlocks, 100, 128, rows);
      QVERIFY(run(pool_, batch, Exl2BatchPath::integer_tiles_256) ==
              run(pool_, batch, Exl2BatchPath::integer_tiles));
    }
  }

  // The largest |q - zero| (codes 0 and all ones) times the largest 16-bit
  // inputs (every input +1 or -1) over a 512-row 8-bit group: the 32-bit
  // sums reach 512 * 128 * 32767 and must not overflow.
  void integerTilesSurviveTheLargestValues() {
    if (!path_runs(Exl2BatchPath::integer_tiles)) QSKIP("the processor lacks AVX2");
    for (const Exl2BatchPath path : kIntegerPaths) {
      if (!path_runs(path)) continue;
      for (const bool largest_codes : {true, false}) {
        for (const float input : {1.0f, -1.0f}) {
          std::mt19937 rng(7);
          Batch batch = make_batch(rng, {{8, 512}, {4, 512}, {2, 32}}, 32, 32, 20);
          std::fill(batch.exl2.q_weight.begin(), batch.exl2.q_weight.end(),
                    largest_codes ? ~0u : 0u);
          std::fill(batch.exl2.q_scale.begin(), batch.exl2.q_scale.end(), 0x76543210u);
          std::fill(batch.x.begin(), batch.x.end(), input);
          std::fill(batch.xp.begin(), batch.xp.end(), input);
          const QString problem = compare_with_reference(batch, run(pool_, batch, path), true);
          QVERIFY2(problem.isEmpty(), qPrintable(problem));
        }
      }
    }
  }

  // Groups the integer tiles cannot take (part of a 32-row block, or longer
  // than 512 rows) go to the float tiles, and asking for integer tiles
  // there is an error rather than a wrong result.
  void groupsTheIntegerTilesCannotTakeGoToFloat() {
    std::mt19937 rng(3);
    for (const auto& plan : std::vector<std::vector<std::pair<int, int>>>{
             {{4, 32}, {4, 16}, {4, 16}}, {{8, 544}, {4, 32}}}) {
      const Batch batch = make_batch(rng, plan, 40, 40, 20);
      QVERIFY(!linear_detail::exl2_batched_integer_takes(
          std::get<Exl2Weight>(batch.exl2.weight().format)));
      for (const Exl2BatchPath path : kIntegerPaths)
        QVERIFY_THROWS_EXCEPTION(std::logic_error, run(pool_, batch, path));
      QVERIFY(run(pool_, batch, Exl2BatchPath::fastest) ==
              run(pool_, batch, Exl2BatchPath::float_tiles));
    }
    const Batch whole = make_batch(rng, kWholeBlocks, 104, 104, 20);
    QVERIFY(linear_detail::exl2_batched_integer_takes(
        std::get<Exl2Weight>(whole.exl2.weight().format)));
    const Exl2BatchPath expected = path_runs(Exl2BatchPath::integer_tiles)
                                       ? Exl2BatchPath::integer_tiles
                                       : Exl2BatchPath::float_tiles;
    QVERIFY(run(pool_, whole, Exl2BatchPath::fastest) == run(pool_, whole, expected));
  }
};

QUIRE_TEST(Exl2BatchedProductTest)
#include "test_exl2_batched.moc"
