#include "quantize_integer.h"

#include <chrono>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <vector>

#include "cli_support.h"
#include "quire/engine/formats/compressed_tensors_writer.h"
#include "quire/engine/formats/gptq_quantizer.h"
#include "quire/engine/modelgen/compressed_tensors_config.h"

namespace quire::cli {
namespace {

namespace formats = engine::formats;
namespace io = engine::io;

std::string module_of(const std::string& name) {
  return name.substr(0, name.size() - std::string_view(".weight").size());
}

}  // namespace

IntegerWritten add_integer_tensors(const std::filesystem::path& in, const io::ModelTensors& tensors,
                                   const IntegerSettings& settings, io::SafetensorsWriter& writer,
                                   std::ostream& progress) {
  const std::vector<std::string> names = ordered_tensor_names(tensors);
  IntegerWritten written;
  Calibration calibration;
  if (!settings.calibration.path.empty()) {
    calibration = calibrate(in, tensors, settings.calibration, progress);
  }
  formats::IntQuantizeOptions format;
  format.bits = settings.bits;
  format.symmetric = settings.symmetric;
  format.group_size = settings.group_size;
  // llm-compressor keeps scales in the model's dtype; the written model is FP16.
  format.scale_dtype = kernels::DType::F16;

  engine::modelgen::IntegerSchemeSettings scheme;
  scheme.bits = settings.bits;
  scheme.symmetric = settings.symmetric;
  scheme.group_size = settings.group_size;
  scheme.actorder = settings.actorder;

  std::size_t total = 0;
  for (const std::string& name : names)
    total += is_layer_linear(name) ? 1 : 0;
  std::size_t done = 0;
  QuantizeSummary& summary = written.summary;
  for (const std::string& name : names) {
    const io::TensorInfo& info = *tensors.get(name).info;
    std::vector<float> values = tensor_floats(tensors, name);
    if (!is_layer_linear(name)) {
      // Linear modules of the layers that stay in 16 bits (routers, experts,
      // fused projections) must be ignored, or a reader looks for their
      // integers.
      if (split_layer_name(name) && name.ends_with(".weight") && info.shape.size() == 2) {
        scheme.ignore.push_back(module_of(name));
      }
      writer.add(name, kernels::DType::F16, info.shape, to_half_bytes(values));
      continue;
    }
    if (info.shape.size() != 2) {
      throw UsageError("IN: tensor " + name + " has shape " + io::format_shape(info.shape) +
                       ", not [out, in]");
    }
    const std::int64_t out_features = info.shape[0];
    const std::int64_t in_features = info.shape[1];
    const std::int64_t group = settings.group_size == 0 ? in_features : settings.group_size;
    if (in_features % group != 0 || in_features % 8 != 0 || out_features % 8 != 0) {
      throw UsageError("IN: tensor " + name + " is " + io::format_shape(info.shape) +
                       "; pack-quantized needs inputs and outputs in multiples of 8 and the "
                       "inputs in whole groups of " +
                       std::to_string(group) + " (choose another --group-size)");
    }
    const std::string key = module_of(name);
    const auto start = std::chrono::steady_clock::now();
    std::ostringstream line;
    line << std::setprecision(5);
    formats::IntQuantized q;
    const auto found = calibration.hessians.find(key);
    if (found != calibration.hessians.end()) {
      formats::IntGptqOptions options;
      options.format = format;
      options.hessian = found->second->sum;
      options.actorder = settings.actorder;
      formats::IntGptqReport report;
      q = formats::quantize_ints_gptq(values, out_features, in_features, options, &report);
      line << ", output error " << report.gptq_error << " (round to nearest "
           << report.rounded_error << ")";
    } else {
      if (!calibration.hessians.empty()) {
        throw UsageError("calibration saw no inputs of " + key +
                         "; quantize needs every projection computed by the model");
      }
      q = formats::quantize_ints(values, out_features, in_features, format);
    }
    for (formats::NamedTensor& tensor : formats::pack_quantized_tensors(q, format)) {
      writer.add(key + "." + tensor.suffix, tensor.dtype, std::move(tensor.shape),
                 std::move(tensor.bytes));
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    progress << "quantize: [" << ++done << '/' << total << "] " << key << ": " << settings.bits
             << " bits" << line.str() << std::fixed << std::setprecision(1) << ", " << seconds
             << " s\n"
             << std::flush;
    summary.quantized_bits += double(settings.bits) * double(info.elements());
    summary.quantized_weights += double(info.elements());
    ++summary.linear_layers;
  }
  summary.tensors = writer.size();
  written.quantization_config = engine::modelgen::compressed_tensors_quantization_config(scheme);
  written.calibration_tokens = calibration.tokens;
  return written;
}

}  // namespace quire::cli
