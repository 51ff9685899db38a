#pragma once

// What a generated model directory should hold, worked out here from the spec
// alone (independently of the generator), and helpers shared by the suites.

#include <QByteArray>
#include <QString>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "quire/engine/io/model_tensors.h"
#include "quire/engine/modelgen/random_model_spec.h"
#include "quire/kernels/dtype.h"

namespace quire::test {

// One row of the architecture x format matrix every layout test runs over.
struct ModelVariant {
  std::string name;  // "qwen2 exl2:3.0"
  engine::modelgen::RandomModelSpec spec;
};

// llama, mistral and qwen2, each as fp16, bf16, exl2:4.0, exl2:3.0, gptq,
// gptq v2 (without act-order) and sharded; with sliding windows, rope
// scaling, an explicit head_dim and untied heads spread over the rows.
std::vector<ModelVariant> model_variants();

// A dtype and shape; kAny in the shape where the generator's plan decides
// (the number of EXL2 groups and q_weight rows).
struct ExpectedTensor {
  kernels::DType dtype = kernels::DType::F16;
  std::vector<std::int64_t> shape;
};
inline constexpr std::int64_t kAny = -1;

// Every tensor of any family: norms, routers and Gemma 3's vision tower
// besides the projections.
std::map<std::string, ExpectedTensor> expected_tensors(
    const engine::modelgen::RandomModelSpec& spec);

// The projections of every layer (Phi-3's fused ones, every expert of a
// mixture) and, when untied, the head, with their inputs and outputs.
struct ExpectedLinear {
  std::string key;
  std::int64_t in = 0;
  std::int64_t out = 0;
  bool head = false;
};
std::vector<ExpectedLinear> expected_linears(const engine::modelgen::RandomModelSpec& spec);

QByteArray read_file(const std::filesystem::path& path);

// Every regular file below `dir` by relative name, with its bytes.
std::map<std::string, QByteArray> directory_contents(const std::filesystem::path& dir);

// The tensor's values as doubles (F16, BF16 or F32).
std::vector<double> float_values(const engine::io::ModelTensors& tensors, const std::string& name);

struct Moments {
  double mean = 0.0;
  double deviation = 0.0;
};
Moments moments(const std::vector<double>& values);

}  // namespace quire::test
