// quire-cli devices: what each backend can use on this machine.

#include "devices_command.h"

#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli_support.h"
#include "cuda_self_check.h"
#include "quire/engine/selfcheck/verified_gpus.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "quire/kernels/cuda_loader.h"

namespace quire::cli {
namespace {

using Json = nlohmann::ordered_json;

namespace selfcheck = engine::selfcheck;

// The CUDA backend's self-check as the command reports it.
struct CheckReport {
  // "passed", "failed", "not_run", or "incomplete" (run now, stopped by an
  // error; not remembered).
  std::string status = "not_run";
  std::string checked_at;
  std::string summary;
  bool ran_now = false;
  std::string log;
  std::string store_error;
};

// One backend as the command reports it: its devices, or why it has none.
struct BackendReport {
  std::string name;
  std::vector<kernels::DeviceInfo> devices;
  std::string why_not;               // empty when the backend runs
  std::optional<CheckReport> check;  // the CUDA backend's, when it runs
};

BackendReport report(std::string name, const kernels::Backend* backend, std::string why_not) {
  BackendReport result{std::move(name), {}, std::move(why_not), std::nullopt};
  if (backend == nullptr) return result;
  // A backend that loads but cannot read its devices' memory is reported the
  // same way as one that did not load: the other backends still get listed.
  try {
    result.devices = backend->devices();
  } catch (const std::exception& error) {
    result.why_not = error.what();
  }
  return result;
}

CheckReport check_report(const kernels::LoadedBackend& cuda, bool run) {
  CheckReport report;
  report.log = cuda_self_check_store().log_file().string();
  if (run) {
    const selfcheck::GateOutcome outcome = check_cuda(cuda, true);
    report.ran_now = true;
    report.status =
        outcome.passed ? "passed" : (outcome.result.completed ? "failed" : "incomplete");
    report.checked_at = outcome.record.checked_at;
    report.summary = outcome.record.summary;
    report.store_error = outcome.store_error;
    return report;
  }
  if (const std::optional<selfcheck::SelfCheckRecord> record = remembered_cuda_check(cuda)) {
    report.status = record->passed ? "passed" : "failed";
    report.checked_at = record->checked_at;
    report.summary = record->summary;
  }
  return report;
}

Json check_json(const CheckReport& check, const std::vector<kernels::DeviceInfo>& devices) {
  Json entry{{"status", check.status}, {"ran_now", check.ran_now}, {"log", check.log}};
  if (!check.checked_at.empty()) entry["checked_at"] = check.checked_at;
  if (!check.summary.empty()) entry["summary"] = check.summary;
  if (!check.store_error.empty()) entry["store_error"] = check.store_error;
  entry["skipped_by_environment"] = selfcheck::skip_requested();
  Json verified = Json::array();
  for (const selfcheck::VerifiedArchitecture& known : selfcheck::verified_architectures()) {
    verified.push_back({{"architecture", std::string(known.architecture)},
                        {"gpu", std::string(known.gpu)},
                        {"date", std::string(known.date)}});
  }
  entry["verified_architectures"] = verified;
  entry["unverified_architectures_here"] = selfcheck::unverified_architectures(devices);
  return entry;
}

Json report_json(const BackendReport& backend) {
  Json entry{{"name", backend.name}, {"available", backend.why_not.empty()}};
  if (!backend.why_not.empty()) {
    entry["reason"] = backend.why_not;
    return entry;
  }
  entry["devices"] = Json::array();
  for (const kernels::DeviceInfo& device : backend.devices) {
    Json item{{"index", device.index},
              {"name", device.name},
              {"total_bytes", device.total_bytes},
              {"free_bytes", device.free_bytes},
              {"recommended_reserve_bytes", device.recommended_reserve_bytes}};
    if (!device.architecture.empty()) item["architecture"] = device.architecture;
    entry["devices"].push_back(std::move(item));
  }
  if (backend.check) entry["self_check"] = check_json(*backend.check, backend.devices);
  return entry;
}

void print_check(const CheckReport& check, const std::vector<kernels::DeviceInfo>& devices,
                 std::ostream& out) {
  out << "  self-check against the CPU: ";
  if (check.status == "passed") {
    out << "passed " << (check.ran_now ? "now" : "on " + check.checked_at) << ": " << check.summary
        << '\n';
  } else if (check.status == "failed") {
    out << "failed " << (check.ran_now ? "now" : "on " + check.checked_at) << ": " << check.summary
        << "; details in " << check.log << "; the CUDA backend is not used unless "
        << selfcheck::kSkipVariable << "=1\n";
  } else if (check.status == "incomplete") {
    out << "could not be completed: " << check.summary << "; details in " << check.log << '\n';
  } else {
    out << "not run yet for these GPUs, this driver and this Quire; it runs the first time the "
           "CUDA backend is used, or now with --check\n";
  }
  if (!check.store_error.empty())
    out << "  the outcome could not be remembered: " << check.store_error << '\n';
  if (selfcheck::skip_requested()) {
    out << "  " << selfcheck::kSkipVariable
        << "=1: the CUDA backend is used without its self-check\n";
  }
  const std::vector<std::string> unverified = selfcheck::unverified_architectures(devices);
  out << "  verified so far on: " << selfcheck::verified_architectures_text();
  if (!unverified.empty()) {
    std::string list;
    for (const std::string& architecture : unverified)
      list += (list.empty() ? "" : ", ") + architecture;
    out << "; " << list << " here " << (unverified.size() == 1 ? "is" : "are")
        << " not verified yet: only the self-check vouches for "
        << (unverified.size() == 1 ? "it" : "them");
  }
  out << '\n';
}

void print_text(const BackendReport& backend, std::ostream& out) {
  out << backend.name << '\n';
  if (!backend.why_not.empty()) {
    out << "  not available: " << backend.why_not << '\n';
    return;
  }
  for (const kernels::DeviceInfo& device : backend.devices) {
    out << "  " << device.index << "  " << device.name
        << (device.architecture.empty() ? "" : " (" + device.architecture + ")") << ": "
        << human_bytes(device.free_bytes) << " free of " << human_bytes(device.total_bytes)
        << ", keep " << human_bytes(device.recommended_reserve_bytes) << " free\n";
  }
  if (backend.check) print_check(*backend.check, backend.devices, out);
}

std::vector<BackendReport> reports(const std::string& devices, bool check) {
  std::vector<BackendReport> backends;
  const bool all = devices.empty() || devices == "auto";
  if (all || devices == "cpu" || devices.starts_with("cpu:")) {
    try {
      const kernels::CpuBackend cpu(kernels::CpuBackend::parse_devices(all ? "cpu" : devices));
      backends.push_back(report("cpu", &cpu, {}));
    } catch (const std::invalid_argument& error) {
      throw UsageError(std::string("--devices: ") + error.what());
    }
  }
  if (all || devices == "cuda" || devices.starts_with("cuda:")) {
    kernels::LoadedBackend cuda;
    try {
      cuda = kernels::load_cuda_backend(all ? "cuda" : devices);
    } catch (const std::invalid_argument& error) {
      throw UsageError(std::string("--devices: ") + error.what());
    }
    BackendReport entry = report("cuda", cuda.backend.get(), cuda.why_not);
    if (entry.why_not.empty()) {
      try {
        entry.check = check_report(cuda, check);
      } catch (const std::exception& error) {
        // A backend that cannot say its version cannot be checked either.
        entry.why_not = error.what();
      }
    }
    backends.push_back(std::move(entry));
  }
  if (backends.empty()) {
    throw UsageError("--devices \"" + devices +
                     "\" is not understood; write cpu, cpu:2x512MiB, cuda, cuda:0,2, "
                     "cuda:0:2x20GiB or auto");
  }
  return backends;
}

}  // namespace

int run_devices(const DevicesRequest& request, std::ostream& out, std::ostream& err) {
  if (request.check && (request.devices == "cpu" || request.devices.starts_with("cpu:"))) {
    throw UsageError("--check checks the CUDA backend against the CPU; leave out --devices " +
                     request.devices);
  }
  const std::vector<BackendReport> backends = reports(request.devices, request.check);
  if (request.json) {
    Json list = Json::array();
    for (const BackendReport& backend : backends)
      list.push_back(report_json(backend));
    out << Json{{"backends", list}}.dump(2) << '\n';
  } else {
    for (const BackendReport& backend : backends)
      print_text(backend, out);
  }
  if (!request.check) return 0;
  const BackendReport& cuda = backends.back();
  if (!cuda.check) {
    err << "quire-cli: the CUDA backend cannot run, so it cannot be checked: " << cuda.why_not
        << '\n';
    return 2;
  }
  return cuda.check->status == "passed" ? 0 : 1;
}

void add_devices_command(CLI::App& app, int& exit_code) {
  auto request = std::make_shared<DevicesRequest>();
  CLI::App* command = app.add_subcommand(
      "devices",
      "List the devices of the CPU and CUDA backends, or why a backend cannot run, and the CUDA "
      "backend's self-check against the CPU");
  command->add_flag("--json", request->json, "Print one JSON object");
  command->add_option("--devices", request->devices,
                      "Only this device list's backend and logical devices, as --devices of the "
                      "other commands reads it (cpu:2x512MiB, cuda:0:2x20GiB, ...)");
  command->add_flag("--check", request->check,
                    "Run the CUDA backend's self-check against the CPU now and remember the "
                    "outcome (exit status 0 passed, 1 failed, 2 the CUDA backend cannot run)");
  command->callback(
      [request, &exit_code] { exit_code = run_devices(*request, std::cout, std::cerr); });
}

}  // namespace quire::cli
