// EXL3 products: y = H(H(x * suh) W^) * svh + bias (Exl3Weight). The input
// rotation runs once per row (exl3_inputs.cpp), then
//  - up to kExl3FewRows rows (decode steps, short prompts) where the
//    processor has AVX-512 or AVX2: each tile's words are decoded in
//    registers and multiplied at once (linear_exl3_wide.cpp,
//    linear_exl3_avx2.cpp);
//  - otherwise the tiles are decoded into floats, two side by side making
//    one 32-column tile of apply_tile, the register-blocked loop every
//    batched product ends in, so that each decoded tile serves a whole block
//    of rows;
// and the output rotation of each block of 128 outputs, by the thread that
// computed them where the register kernels run.

#include <algorithm>
#include <cstring>
#include <span>
#include <vector>

#include "exl3_decode.h"
#include "exl3_kernels.h"
#include "linear_internal.h"
#include "quire/kernels/cpu/exl3_trellis.h"
#include "quire/kernels/cpu/half.h"
#include "quire/kernels/cpu/simd.h"

namespace quire::kernels::linear_detail {
namespace {

// Two tiles of 16 columns side by side.
constexpr int kPairWidth = 2 * kExl3TileSide;
static_assert(kPairWidth == kWideTile, "a pair of EXL3 tiles is one wide tile");

struct Exl3Scratch {
  Exl3Inputs inputs;
  std::vector<float> sums;  // [rows, Np]: rotated W^, before the output rotation
};

// Where tile position t lies in a pair's decoded tile (input row, then 32
// columns, the right tile's 16 after the left's).
struct PairPlaces {
  int place[kExl3TileWeights];
  PairPlaces() {
    for (int t = 0; t < kExl3TileWeights; ++t)
      place[t] = exl3_tile_row(t) * kPairWidth + exl3_tile_column(t);
  }
};

// Two neighbouring tiles as apply_tile takes them: with the 512-bit or
// 256-bit decoder where one runs (a tile's values in position order, then
// placed), else through the codebook table.
void decode_pair(const Exl3Weight& weight, const float* table, const std::uint16_t* left,
                 float* tile) {
  const int words = exl3_tile_words(weight.bits);
  const bool wide = exl3_wide_supported();
  if (!wide && !exl3_avx2_supported()) {
    exl3_decode_tile(left, weight.bits, table, tile, kPairWidth);
    exl3_decode_tile(left + words, weight.bits, table, tile + kExl3TileSide, kPairWidth);
    return;
  }
  static const PairPlaces places;
  alignas(64) float values[2][kExl3TileWeights];
  const auto decode = wide ? exl3_wide_decode_tile : exl3_avx2_decode_tile;
  decode(left, weight.bits, weight.codebook, values[0]);
  decode(left + words, weight.bits, weight.codebook, values[1]);
  for (int t = 0; t < kExl3TileWeights; ++t) {
    tile[places.place[t]] = values[0][t];
    tile[places.place[t] + kExl3TileSide] = values[1][t];
  }
}

// Columns [32 pair, 32 pair + 32) of the sums for rows [row_begin, row_end),
// from tiles decoded into floats.
void multiply_pair(const Exl3Weight& weight, const float* table, const Exl3Inputs& inputs,
                   std::int64_t row_begin, std::int64_t row_end, std::int64_t pair,
                   std::vector<float>& acc) {
  const std::int64_t padded_in = weight.padded_in;
  const std::int64_t tiles_n = weight.padded_out / kExl3TileSide;
  const std::int64_t rows = row_end - row_begin;
  const int words = exl3_tile_words(weight.bits);
  acc.assign(std::size_t(rows * kPairWidth), 0.0f);
  alignas(64) float tile[kExl3TileSide * kPairWidth];
  for (std::int64_t kt = 0; kt < padded_in / kExl3TileSide; ++kt) {
    decode_pair(weight, table, weight.trellis + (kt * tiles_n + 2 * pair) * words, tile);
    apply_tile<kWideTile>(inputs.rotated.data() + row_begin * padded_in + kt * kExl3TileSide,
                          padded_in, rows, tile, kExl3TileSide, acc.data());
  }
}

void multiply_tiles(ThreadPool& pool, const Exl3Weight& weight, const Exl3Inputs& inputs,
                    std::int64_t rows, float* sums) {
  const float* table = exl3_codebook_table(weight.codebook);
  const std::int64_t pairs = weight.padded_out / kPairWidth;
  const std::int64_t row_blocks = (rows + kRowBlock - 1) / kRowBlock;
  pool.parallel_for(pairs * row_blocks, 1, [&](std::int64_t first, std::int64_t last) {
    std::vector<float> acc;
    for (std::int64_t item = first; item < last; ++item) {
      const std::int64_t pair = item / row_blocks;
      const std::int64_t row_begin = (item % row_blocks) * kRowBlock;
      const std::int64_t row_end = std::min(rows, row_begin + kRowBlock);
      multiply_pair(weight, table, inputs, row_begin, row_end, pair, acc);
      for (std::int64_t r = row_begin; r < row_end; ++r) {
        std::copy_n(acc.data() + (r - row_begin) * kPairWidth, kPairWidth,
                    sums + r * weight.padded_out + pair * kPairWidth);
      }
    }
  });
}

// The output rotation, svh, the bias, and the outputs stored, for columns
// [first, first + 128) of every row: one rotation block.
void finish_block(const Product& product, const Exl3Weight& weight, float* sums,
                  std::int64_t first) {
  alignas(64) float signs[kExl3RotationSize];
  widen_halves(weight.svh + first, kExl3RotationSize, signs);
  for (std::int64_t r = 0; r < product.rows; ++r) {
    float* block = sums + r * weight.padded_out + first;
    exl3_hadamard128(block);
    for (int n = 0; n < kExl3RotationSize; ++n)
      block[n] *= signs[n];
    if (first < product.out_features) store_outputs(product, r, first, kExl3RotationSize, block);
  }
}

// finish_block for every block, after the tiles' loop.
void finish_rows(ThreadPool& pool, const Product& product, const Exl3Weight& weight, float* sums) {
  const std::int64_t blocks = weight.padded_out / kExl3RotationSize;
  pool.parallel_for(blocks, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t b = begin; b < end; ++b)
      finish_block(product, weight, sums, b * kExl3RotationSize);
  });
}

// The register kernels a product takes: 512-bit, 256-bit, or 0 (the tiles).
int register_width(const Product& product, Exl3Path path) {
  if (path == Exl3Path::registers) return 512;
  if (path == Exl3Path::registers_256) return 256;
  if (path != Exl3Path::fastest || product.rows > kExl3FewRows) return 0;
  return exl3_wide_supported() ? 512 : exl3_avx2_supported() ? 256 : 0;
}

// MUL1's decode rows take 8-bit inputs (vpdpbusd); prompt rows (a mixture's
// experts see a few rows each) keep the float ones and the codebook's exact
// values, as the tiles do: 8-bit inputs moved a random Qwen3-MoE model's
// logits by 1% of their range, unrounded values by 6e-4.
bool integer_inputs(const Product& product, const Exl3Weight& weight, int registers) {
  return registers != 0 && weight.codebook == Exl3Codebook::mul1 &&
         product.kind == ProductRows::decode;
}

// Column tiles per work item of the register kernels: one rotation block,
// which the item then finishes, so that a product is one parallel loop.
constexpr std::int64_t kItemTiles = kExl3RotationSize / kExl3TileSide;

}  // namespace

void exl3_product(ThreadPool& pool, const Product& product, const Exl3Weight& weight,
                  Exl3Path path) {
  const int registers = register_width(product, path);
  const ScratchLease<Exl3Scratch> scratch;
  exl3_prepare_inputs(pool, product, weight, integer_inputs(product, weight, registers),
                      scratch->inputs);
  grow_to(scratch->sums, std::size_t(product.rows * weight.padded_out));
  float* sums = scratch->sums.data();
  if (registers != 0) {
    const std::int64_t tiles_n = weight.padded_out / kExl3TileSide;
    const auto columns = registers == 512 ? exl3_wide_columns : exl3_avx2_columns;
    pool.parallel_for(tiles_n / kItemTiles, 1, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t item = begin; item < end; ++item) {
        columns(weight, scratch->inputs, item * kItemTiles, (item + 1) * kItemTiles, sums);
        finish_block(product, weight, sums, item * kExl3RotationSize);
      }
    });
  } else {
    multiply_tiles(pool, weight, scratch->inputs, product.rows, sums);
    finish_rows(pool, product, weight, sums);
  }
}

bool exl3_products_together(const Product& product) {
  return register_width(product, Exl3Path::fastest) != 0;
}

void exl3_products(ThreadPool& pool, std::span<const Product> products,
                   std::span<const Exl3Weight* const> weights) {
  const int registers = register_width(products.front(), Exl3Path::fastest);
  const auto columns = registers == 512 ? exl3_wide_columns : exl3_avx2_columns;
  std::vector<ScratchLease<Exl3Scratch>> scratch(products.size());
  // Each product's bands of column tiles, numbered across all of them.
  std::vector<std::int64_t> first_item{0};
  for (std::size_t i = 0; i < products.size(); ++i) {
    const Exl3Weight& weight = *weights[i];
    exl3_prepare_inputs(pool, products[i], weight, integer_inputs(products[i], weight, registers),
                        scratch[i]->inputs);
    grow_to(scratch[i]->sums, std::size_t(products[i].rows * weight.padded_out));
    first_item.push_back(first_item.back() + weight.padded_out / kExl3RotationSize);
  }
  pool.parallel_for(first_item.back(), 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t item = begin; item < end; ++item) {
      const auto i = std::size_t(std::upper_bound(first_item.begin(), first_item.end(), item) -
                                 first_item.begin() - 1);
      const Exl3Weight& weight = *weights[i];
      const std::int64_t block = item - first_item[i];
      columns(weight, scratch[i]->inputs, block * kItemTiles, (block + 1) * kItemTiles,
              scratch[i]->sums.data());
      finish_block(products[i], weight, scratch[i]->sums.data(), block * kExl3RotationSize);
    }
  });
}

}  // namespace quire::kernels::linear_detail
