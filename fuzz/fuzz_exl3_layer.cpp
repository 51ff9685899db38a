// An EXL3 layer as a file could hold it: the fuzz input picks each tensor's
// presence, dtype and shape, the shape config.json gives the layer, and the
// tensors' bytes. describe_exl3 must accept it or throw ModelError; an
// accepted layer is then dequantized and multiplied by both CPU product
// paths, whose decoders read every tile's words (any words are a valid
// code), so that a check letting through a shape the kernels cannot read
// shows up as a sanitizer report.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include "quire/engine/formats/exl3_layout.h"
#include "quire/engine/model_error.h"
#include "quire/kernels/cpu/linear.h"
#include "quire/kernels/cpu/thread_pool.h"

namespace {

using quire::engine::formats::Exl3Tensors;
using quire::engine::formats::TensorView;
using quire::kernels::DType;

class Input {
 public:
  Input(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  std::uint8_t byte() { return at_ < size_ ? data_[at_++] : 0; }

  // A small dimension: mostly legal tile counts, sometimes anything.
  std::int64_t dimension() {
    const std::uint8_t b = byte();
    return (b & 0x80) != 0 ? std::int64_t(b & 0x7f) * 16 : std::int64_t(b % 20);
  }

  DType dtype() {
    constexpr DType kTypes[] = {DType::I16, DType::F16, DType::I32, DType::BF16, DType::F32,
                                DType::U8};
    const std::uint8_t b = byte();
    return b < 200 ? kTypes[0] : kTypes[b % 6];
  }

  // `bytes` of data, from the input while it lasts, then a repeating pattern.
  std::vector<std::byte> bytes(std::size_t count) {
    std::vector<std::byte> out(count);
    for (std::size_t i = 0; i < count; ++i)
      out[i] = static_cast<std::byte>(at_ < size_ ? data_[at_++] : (i * 131 + 7) & 0xff);
    return out;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

// Tensors stay small: the products run on every accepted input.
constexpr std::int64_t kMostElements = 1 << 15;

struct Tensor {
  TensorView view;
  std::vector<std::byte> storage;
};

std::optional<Tensor> tensor(Input& in, DType usual, std::vector<std::int64_t> shape,
                             bool optional_one) {
  if (optional_one && (in.byte() & 3) == 0) return std::nullopt;
  Tensor t;
  t.view.dtype = (in.byte() & 7) == 0 ? in.dtype() : usual;
  std::int64_t elements = 1;
  for (const std::int64_t d : shape)
    elements *= d;
  if (elements > kMostElements) return std::nullopt;
  t.view.shape = std::move(shape);
  t.storage = in.bytes(std::size_t(elements) * quire::kernels::dtype_size(t.view.dtype));
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Input in(data, size);
  const std::int64_t kt = in.dimension() / 16 + (in.byte() & 1);
  const std::int64_t nt = in.dimension() / 16 + (in.byte() & 1);
  const std::int64_t bits = in.byte() % 10;
  std::optional<Tensor> trellis = tensor(in, DType::I16, {kt, nt, 16 * bits}, false);
  if (!trellis) return 0;
  const std::int64_t kp = std::max<std::int64_t>(kt * 16 + (in.byte() % 3 == 0 ? 16 : 0), 0);
  const std::int64_t np = std::max<std::int64_t>(nt * 16 - (in.byte() % 5 == 0 ? 16 : 0), 0);
  const bool packed_signs = (in.byte() & 7) == 0;
  std::optional<Tensor> suh, svh, su, sv, mcg, mul1, bias;
  if (packed_signs) {
    su = tensor(in, DType::I16, {kp / 16}, true);
    sv = tensor(in, DType::I16, {np / 16}, true);
  } else {
    suh = tensor(in, DType::F16, {kp}, true);
    svh = tensor(in, DType::F16, {np}, true);
  }
  const std::uint8_t codebook = in.byte() % 4;
  if (codebook == 1 || codebook == 3) mcg = tensor(in, DType::I32, {}, false);
  if (codebook == 2 || codebook == 3) mul1 = tensor(in, DType::I32, {}, false);
  const std::int64_t outputs = std::max<std::int64_t>(np - in.byte() % 130, 0);
  if ((in.byte() & 3) == 0) bias = tensor(in, DType::F16, {outputs}, false);

  Exl3Tensors tensors;
  tensors.trellis = trellis->view;
  const auto place = [](std::optional<Tensor>& from, std::optional<TensorView>& to) {
    if (!from) return;
    from->view.bytes = std::span<const std::byte>(from->storage);
    to = from->view;
  };
  tensors.trellis.bytes = std::span<const std::byte>(trellis->storage);
  place(suh, tensors.suh);
  place(svh, tensors.svh);
  place(su, tensors.su);
  place(sv, tensors.sv);
  place(mcg, tensors.mcg);
  place(mul1, tensors.mul1);
  place(bias, tensors.bias);
  const quire::engine::formats::LinearShape shape{
      (in.byte() & 1) != 0 ? std::max<std::int64_t>(kp - in.byte() % 140, 0) : 0, outputs};
  try {
    const quire::engine::formats::Exl3Layout layout =
        quire::engine::formats::describe_exl3("model.layers.0.mlp.up_proj", tensors, shape);
    // Aligned copies, as the loader makes them.
    std::vector<std::uint16_t> trellis_words(trellis->storage.size() / 2);
    std::memcpy(trellis_words.data(), trellis->storage.data(), trellis->storage.size());
    tensors.trellis.bytes = std::as_bytes(std::span(trellis_words));
    std::vector<std::uint16_t> suh_words, svh_words;
    if (suh) {
      suh_words.resize(suh->storage.size() / 2);
      std::memcpy(suh_words.data(), suh->storage.data(), suh->storage.size());
      tensors.suh->bytes = std::as_bytes(std::span(suh_words));
    }
    if (svh) {
      svh_words.resize(svh->storage.size() / 2);
      std::memcpy(svh_words.data(), svh->storage.data(), svh->storage.size());
      tensors.svh->bytes = std::as_bytes(std::span(svh_words));
    }
    tensors.bias.reset();
    const quire::kernels::LinearWeight weight =
        quire::engine::formats::host_linear_weight(layout, tensors);
    const std::vector<float> dense = quire::kernels::dequantize(weight);
    quire::kernels::ThreadPool pool(1);
    std::vector<float> x(std::size_t(3 * layout.in_features), 0.5f);
    std::vector<float> y(std::size_t(3 * layout.out_features));
    quire::kernels::linear(pool, x.data(), 1, weight, y.data(),
                           quire::kernels::ProductRows::decode);
    quire::kernels::linear(pool, x.data(), 3, weight, y.data(),
                           quire::kernels::ProductRows::prompt);
  } catch (const quire::engine::ModelError&) {
  }
  return 0;
}
