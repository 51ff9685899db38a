// quire-cli devices: what each backend can use on this machine.

#include "devices_command.h"

#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_support.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "quire/kernels/cuda_loader.h"

namespace quire::cli {
namespace {

using Json = nlohmann::ordered_json;

// One backend as the command reports it: its devices, or why it has none.
struct BackendReport {
  std::string name;
  std::vector<kernels::DeviceInfo> devices;
  std::string why_not;  // empty when the backend runs
};

BackendReport report(std::string name, const kernels::Backend* backend, std::string why_not) {
  BackendReport result{std::move(name), {}, std::move(why_not)};
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

Json report_json(const BackendReport& backend) {
  Json entry{{"name", backend.name}, {"available", backend.why_not.empty()}};
  if (!backend.why_not.empty()) {
    entry["reason"] = backend.why_not;
    return entry;
  }
  entry["devices"] = Json::array();
  for (const kernels::DeviceInfo& device : backend.devices) {
    entry["devices"].push_back({{"index", device.index},
                                {"name", device.name},
                                {"total_bytes", device.total_bytes},
                                {"free_bytes", device.free_bytes},
                                {"recommended_reserve_bytes", device.recommended_reserve_bytes}});
  }
  return entry;
}

void print_text(const BackendReport& backend, std::ostream& out) {
  out << backend.name << '\n';
  if (!backend.why_not.empty()) {
    out << "  not available: " << backend.why_not << '\n';
    return;
  }
  for (const kernels::DeviceInfo& device : backend.devices) {
    out << "  " << device.index << "  " << device.name << ": " << human_bytes(device.free_bytes)
        << " free of " << human_bytes(device.total_bytes) << ", keep "
        << human_bytes(device.recommended_reserve_bytes) << " free\n";
  }
}

std::vector<BackendReport> reports(const std::string& devices) {
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
    backends.push_back(report("cuda", cuda.backend.get(), cuda.why_not));
  }
  if (backends.empty()) {
    throw UsageError("--devices \"" + devices +
                     "\" is not understood; write cpu, cpu:2x512MiB, cuda, cuda:0,2, "
                     "cuda:0:2x20GiB or auto");
  }
  return backends;
}

}  // namespace

int run_devices(bool json, const std::string& devices, std::ostream& out) {
  const std::vector<BackendReport> backends = reports(devices);
  if (json) {
    Json list = Json::array();
    for (const BackendReport& backend : backends)
      list.push_back(report_json(backend));
    out << Json{{"backends", list}}.dump(2) << '\n';
    return 0;
  }
  for (const BackendReport& backend : backends)
    print_text(backend, out);
  return 0;
}

void add_devices_command(CLI::App& app, int& exit_code) {
  auto json = std::make_shared<bool>(false);
  auto devices = std::make_shared<std::string>();
  CLI::App* command = app.add_subcommand(
      "devices", "List the devices of the CPU and CUDA backends, or why a backend cannot run");
  command->add_flag("--json", *json, "Print one JSON object");
  command->add_option("--devices", *devices,
                      "Only this device list's backend and logical devices, as --devices of the "
                      "other commands reads it (cpu:2x512MiB, cuda:0:2x20GiB, ...)");
  command->callback(
      [json, devices, &exit_code] { exit_code = run_devices(*json, *devices, std::cout); });
}

}  // namespace quire::cli
