#include "quire/engine/selfcheck/backend_comparison.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <exception>
#include <limits>
#include <optional>
#include <sstream>
#include <vector>

#include "check_model.h"
#include "model_trace.h"

namespace quire::engine::selfcheck {
namespace {

constexpr int kGeneratedTokens = 16;

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

// Error messages go into a one-line summary; a line break would split the
// line a user sees on standard error or in the status bar.
std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

std::string device_label(const kernels::DeviceInfo& device) {
  std::string label = "device " + std::to_string(device.index) + " (" + device.name;
  if (!device.architecture.empty()) label += ", " + device.architecture;
  return label + ")";
}

// How far a row of the candidate lies from the reference's, as a fraction of
// the reference row's largest |logit| (at least 1, so that a row of tiny
// logits is not judged on noise). NaN and infinity count as infinitely far.
double relative_difference(std::span<const float> actual, std::span<const float> expected) {
  float scale = 1.0f;
  for (const float value : expected)
    scale = std::max(scale, std::fabs(value));
  double worst = 0.0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const double difference = std::fabs(double(actual[i]) - double(expected[i]));
    if (!std::isfinite(difference)) return std::numeric_limits<double>::infinity();
    worst = std::max(worst, difference / scale);
  }
  return worst;
}

struct Worst {
  double difference = 0.0;
  std::string where;
};

// One device's comparison with the reference: the worst difference of the
// prompt's rows and the decode steps' rows, and the first token it chose
// otherwise than the reference where that was no near tie.
struct DeviceVerdict {
  Worst prompt;
  Worst steps;
  std::optional<std::string> token_problem;
  int ties = 0;
};

DeviceVerdict judge(const ModelTrace& actual, const ModelTrace& expected, float tolerance) {
  DeviceVerdict verdict;
  for (std::size_t row = 0; row < expected.prompt_rows.size(); ++row) {
    const double difference =
        relative_difference(actual.prompt_rows[row], expected.prompt_rows[row]);
    if (difference > verdict.prompt.difference || row == 0) {
      verdict.prompt = {difference, "prompt position " + std::to_string(row)};
    }
  }
  for (std::size_t step = 1; step < expected.decision_rows.size(); ++step) {
    const double difference =
        relative_difference(actual.decision_rows[step], expected.decision_rows[step]);
    if (difference > verdict.steps.difference || step == 1) {
      verdict.steps = {difference, "decode step " + std::to_string(step)};
    }
  }
  for (std::size_t i = 0; i < expected.best.size(); ++i) {
    const cache::TokenId chosen = actual.best[i];
    const cache::TokenId wanted = expected.best[i];
    if (chosen == wanted) continue;
    // Within the tolerance either token may win; beyond it, one is wrong.
    const std::vector<float>& row = expected.decision_rows[i];
    float scale = 1.0f;
    for (const float value : row)
      scale = std::max(scale, std::fabs(value));
    const float lead = row[std::size_t(wanted)] - row[std::size_t(chosen)];
    if (lead <= tolerance * scale) {
      ++verdict.ties;
      continue;
    }
    verdict.token_problem = "greedy token " + std::to_string(i + 1) + " of " +
                            std::to_string(expected.best.size()) + " is " + std::to_string(chosen) +
                            " instead of the CPU's " + std::to_string(wanted) +
                            " (whose logit leads by " + number(lead) + ")";
    break;
  }
  return verdict;
}

bool worst_passes(const Worst& worst, float tolerance) {
  return worst.difference <= tolerance;  // false for infinity
}

std::string describe(const Worst& worst) {
  if (std::isinf(worst.difference)) return "not a finite number at " + worst.where;
  return number(worst.difference) + " of the row's largest logit at " + worst.where;
}

std::string header(const kernels::Backend& candidate, const kernels::Backend& reference,
                   const ComparisonOptions& options) {
  std::ostringstream text;
  text << "Quire " << (options.quire_version.empty() ? "(version unknown)" : options.quire_version)
       << ": self-check of the " << candidate.name() << " backend against the " << reference.name()
       << " backend\n";
  const std::string version = candidate.version();
  text << "backend version: " << (version.empty() ? "(not given)" : version) << '\n';
  return text.str();
}

// The three lines of one run's comparison in the details.
std::string report(const std::string& label, const DeviceVerdict& verdict) {
  std::ostringstream text;
  text << label << ": prompt logits differ by at most " << describe(verdict.prompt) << '\n'
       << label << ": decode logits differ by at most " << describe(verdict.steps) << '\n'
       << label << ": greedy tokens: "
       << (verdict.token_problem ? *verdict.token_problem
                                 : std::to_string(kGeneratedTokens) + " of " +
                                       std::to_string(kGeneratedTokens) + " agree")
       << (verdict.ties > 0 ? " (" + std::to_string(verdict.ties) + " near ties)" : "") << '\n';
  return text.str();
}

// What fails a run, or nothing.
std::string problem_of(const DeviceVerdict& verdict, float tolerance) {
  if (!worst_passes(verdict.prompt, tolerance))
    return "logits differ from the CPU's by " + describe(verdict.prompt);
  if (!worst_passes(verdict.steps, tolerance))
    return "logits differ from the CPU's by " + describe(verdict.steps);
  return verdict.token_problem.value_or("");
}

// A check model, the cache it runs with, and the reference backend's trace.
struct CheckedModel {
  CheckedModel(CheckWeights weights, const TraceCache& trace_cache, std::string what,
               kernels::Backend& reference)
      : model(weights),
        cache(trace_cache),
        label(std::move(what)),
        expected(run_trace(model.description(), reference, -1, model.prompt(), kGeneratedTokens,
                           cache)) {}

  CheckModel model;
  TraceCache cache;
  std::string label;  // after the device's in each line; empty for the first case
  ModelTrace expected;
};

}  // namespace

SelfCheckResult compare_backends(kernels::Backend& candidate, kernels::Backend& reference,
                                 const ComparisonOptions& options) {
  SelfCheckResult result;
  std::ostringstream details;
  std::vector<kernels::DeviceInfo> devices;
  try {
    details << header(candidate, reference, options);
    devices = candidate.devices();
    for (const kernels::DeviceInfo& device : devices)
      details << device_label(device) << '\n';
  } catch (const std::exception& error) {
    result.summary = "the backend cannot list its devices: " + one_line(error.what());
    result.details = details.str() + result.summary + '\n';
    return result;
  }

  // The FP16 model with an FP16 cache; again with a Q8 cache and its
  // residual window (the coded pages' attention, the FP16 mirror of the open
  // page); and the FP8 and EXL3 models where the candidate takes those
  // weights, whose products are kernels of their own.
  std::deque<CheckedModel> models;  // CheckModel stays where it is made
  try {
    models.emplace_back(CheckWeights::fp16, TraceCache{}, "", reference);
    models.emplace_back(CheckWeights::fp16, TraceCache{cache::CacheFormat::Q8, 1},
                        "Q8 cache with its residual window", reference);
    if (candidate.runs_fp8_weights() && reference.runs_fp8_weights())
      models.emplace_back(CheckWeights::fp8, TraceCache{}, "FP8 model", reference);
    if (candidate.runs_exl3_weights() && reference.runs_exl3_weights())
      models.emplace_back(CheckWeights::exl3, TraceCache{}, "EXL3 model", reference);
    for (const CheckedModel& checked : models) {
      details << "model: " << checked.model.shape()
              << (checked.label.empty() ? "" : " (" + checked.label + ")") << '\n';
    }
    details << "prompt: " << models.front().model.prompt().size() << " tokens in chunks of "
            << kCheckPageSize << " on pages of " << kCheckPageSize << " tokens, then "
            << kGeneratedTokens << " greedy tokens; tolerance " << number(options.tolerance)
            << " of a row's largest logit\n";
  } catch (const std::exception& error) {
    result.summary = "the check could not be prepared: " + one_line(error.what());
    result.details = details.str() + result.summary + '\n';
    return result;
  }

  double worst_seen = 0.0;
  for (const kernels::DeviceInfo& device : devices) {
    for (const CheckedModel& checked : models) {
      std::string label = device_label(device);
      if (!checked.label.empty()) label += ", " + checked.label;
      DeviceVerdict verdict;
      try {
        const ModelTrace actual =
            run_trace(checked.model.description(), candidate, device.index, checked.model.prompt(),
                      kGeneratedTokens, checked.cache, checked.expected.best);
        verdict = judge(actual, checked.expected, options.tolerance);
      } catch (const std::exception& error) {
        result.summary = label + ": the check stopped with an error: " + one_line(error.what());
        details << label << ": " << result.summary << '\n';
        result.details = details.str();
        return result;
      }
      details << report(label, verdict);
      const std::string problem = problem_of(verdict, options.tolerance);
      if (!problem.empty()) {
        result.completed = true;
        result.summary = label + ": " + problem + " (tolerance " + number(options.tolerance) + ")";
        details << "result: failed: " << result.summary << '\n';
        result.details = details.str();
        return result;
      }
      worst_seen = std::max({worst_seen, verdict.prompt.difference, verdict.steps.difference});
    }
  }
  result.completed = true;
  result.passed = true;
  result.summary = "agrees with the CPU on " + std::to_string(devices.size()) +
                   (devices.size() == 1 ? " device" : " devices") + " (largest difference " +
                   number(worst_seen) + " of a row's largest logit; " +
                   std::to_string(kGeneratedTokens) + " greedy tokens agree in each of " +
                   std::to_string(models.size()) + " runs)";
  details << "result: passed: " << result.summary << '\n';
  result.details = details.str();
  return result;
}

}  // namespace quire::engine::selfcheck
