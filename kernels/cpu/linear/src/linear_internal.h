#pragma once

// Pieces shared by the products of the three weight formats: the shape of one
// call, how it is cut into tiles for the thread pool, and number conversions
// written so that the compiler can vectorize the loops that use them.

#include <cstdint>
#include <span>
#include <vector>

#include "quire/kernels/cpu/simd.h"
#include "quire/kernels/cpu/thread_pool.h"
#include "quire/kernels/linear_weight.h"
#include "scratch_lease.h"

// The loops of the products are plain C++ that the compiler vectorizes. On
// x86-64 each tile function is compiled for the baseline and for x86-64-v3
// (simd.h), and the loader picks the clone the processor runs. Against the
// baseline (SSE2), AVX2 ran the products 1.5 to 2 times faster; the FMA of v3
// added a few percent more (batch-1 decode of the 96M benchmark model, 77 to
// 82 tokens/s). The clones sum every lane in the same order. Everything a tile
// function calls is forced inline so that it, too, is compiled for the chosen
// clone. Defining QUIRE_LINEAR_CLONES empty builds the baseline only.
#ifndef QUIRE_LINEAR_CLONES
#define QUIRE_LINEAR_CLONES QUIRE_CPU_CLONES
#endif
#ifndef QUIRE_LINEAR_INLINE
#define QUIRE_LINEAR_INLINE QUIRE_CPU_INLINE
#endif

namespace quire::kernels::linear_detail {

// One call of linear(): out[rows, N] = x[rows, K] W^T + bias.
struct Product {
  const float* x = nullptr;
  std::int64_t rows = 0;
  std::int64_t in_features = 0;   // K
  std::int64_t out_features = 0;  // N
  const float* bias = nullptr;    // [N] widened to FP32, or nullptr
  float* out = nullptr;
  // [N]: each output is multiplied by its scale before the bias is added
  // (FP8 weights' per-row scales); nullptr: none.
  const float* scales = nullptr;
  ProductRows kind = ProductRows::prompt;
};

// Quantized products work on tiles of 32 output columns, a width the inner
// loops vectorize at any SIMD width; columns left over (N is a multiple of 8)
// go in tiles of 8.
inline constexpr int kWideTile = 32;
inline constexpr int kNarrowTile = 8;

struct ColumnTile {
  std::int64_t begin = 0;
  int width = kWideTile;
};

// Rows of one work item in a batched product. The decoded weights of a tile
// are reused this many times before the next tile is decoded: with 32, a
// prefill chunk decoded (widened, dequantized) every weight once per 32
// tokens, a fifth of FP16 prefill time on a 96M model; 128 made prefill of
// 163-2048 tokens 10-20% faster (FP16 and EXL2), 256 no faster again.
inline constexpr std::int64_t kRowBlock = 128;

// The work items of a product: every (row block, column tile) pair, tile-major
// so that consecutive items of one thread reuse the weights in its cache.
class TileGrid {
 public:
  TileGrid(std::int64_t rows, std::int64_t columns);
  std::int64_t size() const { return static_cast<std::int64_t>(tiles_.size()) * row_blocks_; }
  const ColumnTile& tile(std::int64_t item) const {
    return tiles_[std::size_t(item / row_blocks_)];
  }
  std::int64_t row_begin(std::int64_t item) const { return (item % row_blocks_) * kRowBlock; }
  std::int64_t row_end(std::int64_t item) const;

 private:
  std::int64_t rows_;
  std::int64_t row_blocks_;
  std::vector<ColumnTile> tiles_;
};

// Writes `width` accumulated outputs of one row (those below N) plus the bias.
void store_outputs(const Product& product, std::int64_t row, std::int64_t begin, int width,
                   const float* values);

void dense_product(ThreadPool& pool, const Product& product, const DenseWeight& weight);
void exl2_product(ThreadPool& pool, const Product& product, const Exl2Weight& weight);
// The inputs of an EXL2 product gathered into quantized order (perm), into
// xp (grown as needed), and the row length of its q_weight.
void exl2_permute_inputs(ThreadPool& pool, const Product& product, const Exl2Weight& weight,
                         std::vector<float>& xp);
std::int64_t exl2_columns(const Product& product, const Exl2Weight& weight);
void gptq_product(ThreadPool& pool, const Product& product, const GptqWeight& weight);
// EXL3 products (linear_exl3.cpp). Up to this many rows take the kernels
// that decode each tile in registers (where the processor has them); more
// rows decode each tile once into floats for a block of rows. `path` lets
// tests ask for each: registers (512-bit) needs exl3_wide_supported(),
// registers_256 exl3_avx2_supported().
inline constexpr std::int64_t kExl3FewRows = 16;
enum class Exl3Path { fastest, registers, registers_256, tiles };
void exl3_product(ThreadPool& pool, const Product& product, const Exl3Weight& weight,
                  Exl3Path path = Exl3Path::fastest);
// Several products over the same rows (a layer's q, k and v, or gate and
// up) in one parallel loop, so that small products fill the threads
// together: where exl3_products_together(product) holds for their rows.
// Each equals exl3_product's.
bool exl3_products_together(const Product& product);
void exl3_products(ThreadPool& pool, std::span<const Product> products,
                   std::span<const Exl3Weight* const> weights);
void fp8_product(ThreadPool& pool, const Product& product, const Fp8Weight& weight);
// out[n - begin] = x . w[n] for FP16 rows n in [begin, end) of length k_count,
// with AVX2, FMA and F16C; false (nothing written) where the processor lacks
// them (dense_dots_f16.cpp).
bool f16_dots(const float* x, const std::uint16_t* w, std::int64_t k_count, std::int64_t begin,
              std::int64_t end, float* out);
// The same for the `rows` inputs of a decode step of a few jobs (x rows
// k_count apart): out[r * (end - begin) + n - begin], each sum in f16_dots'
// order, so it does not depend on how many jobs ran together. Each weight is
// read from memory once for all rows, and no widened tile is written. Only
// where f16_dots_available().
inline constexpr std::int64_t kF16FewRows = 16;
bool f16_dots_available();
// tile[j * width + i] = w[i * k_count + j] widened, for i < outputs and j <
// depth (at most 32): a block of FP16 weight rows laid out for apply_tile.
// Where f16_dots_available() and both counts are multiples of 8, eight rows
// at a time are widened and transposed in registers; one row at a time
// otherwise. Exact either way.
void f16_widen_tile(const std::uint16_t* w, std::int64_t k_count, int outputs, int depth, int width,
                    float* tile);
void f16_row_dots(const float* x, std::int64_t rows, const std::uint16_t* w, std::int64_t k_count,
                  std::int64_t begin, std::int64_t end, float* out);
// f16_row_dots for FP8 (E4M3) weight rows, unscaled (the row scales are
// applied to the stored outputs), with AVX2, FMA and F16C: where
// f16_dots_available() (dense_dots_fp8.cpp).
void fp8_row_dots(const float* x, std::int64_t rows, const std::uint8_t* w, std::int64_t k_count,
                  std::int64_t begin, std::int64_t end, float* out);
// EXL2 products of at most kExl2FewRows input rows (decode steps of a few
// jobs, prompt tails, a mixture's experts in a short prompt), `xp` already in
// quantized order and `columns` the row length of q_weight: each weight is
// unpacked once for every four rows (linear_exl2_row.cpp). For 5 to 8 rows
// the float kernel of these, four rows at a time, ran 1.4 to 1.8 times as
// fast as the float tiles of the batched product (one thread, 96M shape's
// MLP weights), and as fast at 16.
inline constexpr std::int64_t kExl2FewRows = 16;
// How exl2_few_rows_product multiplies; tests ask for each path by name.
// int16_inputs quantizes every group's inputs to 16 bits; int8_inputs does so
// for 2- and 4-bit groups only, the rest again to 16 bits; both multiply with
// 512-bit registers where the processor has AVX-512BW (and VNNI where it has
// that), int8_inputs_256 keeps to 256-bit ones. `fastest` picks by whose rows
// they are (ProductRows), where the processor has AVX2 (else float):
//  - decode rows take int8_inputs, for any number of rows, so a decode step's
//    rows are rounded alike however many jobs it holds;
//  - prompt rows take int16_inputs where the processor has AVX-512 VNNI (the
//    rounding of the batched integer tiles that take longer prompts there),
//    float_inputs elsewhere. 8-bit inputs there moved the logits of a 24-token
//    prompt through a mixture of experts (every expert's product a few rows)
//    by 0.5% of their range (random-weight Mixtral in EXL2 4.0), where float
//    products stay within 1e-4.
enum class Exl2RowPath { fastest, float_inputs, int16_inputs, int8_inputs, int8_inputs_256 };
// xp: room for the inputs in quantized order, [rows, K], filled here.
void exl2_few_rows_product(ThreadPool& pool, const Product& product, const Exl2Weight& weight,
                           std::int64_t columns, float* xp,
                           Exl2RowPath path = Exl2RowPath::fastest);

// The integer EXL2 kernel (linear_exl2_integer.cpp): each group's inputs as
// integers with one scale per group and row, laid out as the kernel reads
// them (exl2_integer_layout.h).
//
// Precision: an input is rounded to a multiple of its group's largest
// magnitude / 32767 (16 bits) or / 127 (8 bits), an error of at most 1/65534
// or 1/254 of that magnitude. 8-bit inputs with 4-bit weights are what
// llama.cpp's CPU products use (its Q8_0 activations); the weights' own
// rounding, up to 1/30 of their range, is far larger. The integer sums are
// exact, so the outputs do not depend on the order of the work.
struct Exl2IntegerInputs {
  bool int8_groups = false;         // 2- and 4-bit groups take 8-bit inputs
  std::int64_t half_features = 0;   // K / 2
  std::vector<std::int32_t> pairs;  // [rows, K / 2]: two 16-bit inputs each
  std::int64_t quads_per_row = 0;
  std::vector<std::int32_t> quads;      // [rows, quads_per_row]: four 8-bit inputs each
  std::vector<std::int64_t> quad_base;  // [groups]: a group's first quad (its full blocks only)
  std::vector<float> scales;            // [rows, groups]
  std::vector<std::int32_t> zero_sums;  // [rows, chunks]: zero * sum of a chunk's inputs
  std::vector<int> chunk_base;          // [groups]: a group's first chunk
  int chunks = 0;

  bool takes_int8(const Exl2Group& group) const {
    return int8_groups && (group.bits == 2 || group.bits == 4);
  }
};
bool exl2_integer_supported();
// Sizes inputs (reusing its buffers) for a call; exl2_integer_quantize fills the part of groups
// [first, last), so that the slices of a call quantize their own inputs in parallel.
void exl2_integer_layout(const Exl2Weight& weight, int rows, std::int64_t in_features,
                         bool int8_groups, Exl2IntegerInputs& inputs);
void exl2_integer_quantize(const Exl2Weight& weight, const float* xp, int rows,
                           std::int64_t in_features, std::size_t first, std::size_t last,
                           Exl2IntegerInputs& inputs);
// Whether the 8-bit-input groups can be multiplied with 512-bit registers.
bool exl2_integer_wide_supported();
// out[r][c] = the sums of the groups [first, last) for `rows` input rows and
// every column c < width, like the float kernel's slices; their inputs must
// have been quantized. `wide` takes the 512-bit kernel (needs
// exl2_integer_wide_supported()).
void exl2_integer_slice(const Exl2Weight& weight, std::int64_t columns, std::int64_t in_features,
                        const float* xp, const Exl2IntegerInputs& inputs, int rows,
                        std::size_t first, std::size_t last, int width, bool wide, float* out);

// One EXL2 product of a few rows as independent slices of whole groups, so
// that several products (a layer's q, k and v) can share one parallel loop:
// run every slice once, on any thread, then finish() adds them in order.
// Each slice first gathers its groups' inputs into quantized order (perm)
// into xp, [rows, K], which the caller provides. Gathered up front, on one
// thread while the others waited, sixteen rows' inputs took 3% of a decode
// step's time.
class Exl2FewRows {
 public:
  Exl2FewRows(const Product& product, const Exl2Weight& weight, std::int64_t columns, float* xp,
              Exl2RowPath path = Exl2RowPath::fastest);
  std::size_t slices() const { return starts_.size() - 1; }
  void run_slice(std::size_t slice);
  void finish();

 private:
  std::size_t slice_size() const { return std::size_t(rows_) * std::size_t(width_); }
  void gather_inputs(std::size_t first_group, std::size_t last_group);

  Product product_;
  const Exl2Weight& weight_;
  std::int64_t columns_;
  float* xp_;
  Exl2RowPath path_;
  int rows_;
  int width_;
  std::vector<std::size_t> starts_;
  // The integer inputs and each slice's sums, [slices][rows][width].
  struct Buffers {
    Exl2IntegerInputs inputs;
    std::vector<float> partial;
  };
  ScratchLease<Buffers> buffers_;
};

// Batched EXL2 products (more than kExl2FewRows rows, prefill) take float
// tiles, or where every group is whole 32-row blocks of at most kChunkRows
// rows, integer tiles with 16-bit inputs: the precision of the decode
// kernel's 16-bit inputs. The integer tiles use AVX-512 VNNI where the
// processor has it (linear_exl2_batched.cpp) and AVX2 elsewhere
// (linear_exl2_batched_avx2.cpp), with the same bits. `fastest` picks the
// integer tiles where they can run; tests ask for each by name
// (integer_tiles: the widest the processor has). Decode steps of up to
// kExl2FewRows jobs never come here: the few-row kernels give each row the
// bits it gets alone, the tiles do not.
enum class Exl2BatchPath { fastest, float_tiles, integer_tiles, integer_tiles_256 };
void exl2_batched_product(ThreadPool& pool, const Product& product, const Exl2Weight& weight,
                          std::int64_t columns, const float* xp,
                          Exl2BatchPath path = Exl2BatchPath::fastest);
// Whether the VNNI tiles can run here (wide_vnni_allowed()).
bool exl2_batched_integer_supported();
// Whether the AVX2 tiles can run here.
bool exl2_batched_integer_256_supported();
bool exl2_batched_integer_takes(const Exl2Weight& weight);
// acc[r][0, kWideTile) = the product of input rows [row_begin, row_end) with
// the wide tile of columns at `begin`, before bias; the inputs quantized to
// 16 bits for every group. `pairs` is the caller's scratch.
void exl2_batched_integer_tile(const Exl2Weight& weight, std::int64_t columns,
                               const Exl2IntegerInputs& inputs, std::int64_t row_begin,
                               std::int64_t row_end, std::int64_t begin,
                               std::vector<std::int32_t>& pairs, float* acc);
// The same with AVX2.
void exl2_batched_integer_tile_256(const Exl2Weight& weight, std::int64_t columns,
                                   const Exl2IntegerInputs& inputs, std::int64_t row_begin,
                                   std::int64_t row_end, std::int64_t begin,
                                   std::vector<std::int32_t>& pairs, float* acc);

// acc[r * T + i] += sum_j x[r * x_stride + j] * tile[j * T + i]: a tile of
// `count` decoded weight rows ([input][output]) applied to `rows` input rows.
// Every format's batched product ends in this loop. Defined out of line (for
// T = 8 and 32) so that its code does not depend on the caller it would be
// inlined into: the compiler keeps the sums in registers only in a function
// this small.
template <int T>
void apply_tile(const float* x, std::int64_t x_stride, std::int64_t rows, const float* tile,
                int count, float* acc);
// The same sums one input row at a time, without the register-blocked AVX2
// kernel apply_tile takes where the processor has AVX2 and FMA; the x86-64-v3
// clone of this loop fuses every multiply-add too where the compiler
// contracts them (-O2 and above), and both then give the same bits.
// Whether apply_tile takes the register-blocked AVX2 kernel here.
bool apply_tile_blocked();
// Whether wide tiles take the 512-bit kernel (12 x 32 register blocks)
// instead: where the processor has AVX-512 and QUIRE_CPU_VECTOR_BITS allows it.
bool apply_tile_wide();
template <int T>
void apply_tile_portable(const float* x, std::int64_t x_stride, std::int64_t rows,
                         const float* tile, int count, float* acc);

// Throws std::invalid_argument when the descriptor cannot describe a valid
// weight; shared by linear() and dequantize().
void check_weight(const LinearWeight& weight);

// The branch-free conversions of simd.h, used by every format's tiles.
using kernels::widen_bf16;
using kernels::widen_half;

}  // namespace quire::kernels::linear_detail
