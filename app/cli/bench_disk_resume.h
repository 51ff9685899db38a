#pragma once

// quire-cli bench's disk-resume workload (--resume-tokens): what reopening a
// long chat after a restart costs. One prompt of N tokens, its time to first
// token three ways:
//   cold:      computed whole, on an empty cache without a disk tier;
//   warm:      again on the same runtime, its pages in the device cache;
//   from disk: the first runtime archives its cache to a disk folder and is
//              destroyed, and a new runtime over the same folder restores
//              the pages (a restart within the process).
// The files were just written, so the operating system's page cache may
// still hold them: the figure is the restore's own cost, not a cold disk's.

#include <nlohmann/json.hpp>
#include <string>

#include "engine_options.h"

namespace quire::cli {

struct DiskResumeWorkload {
  std::string directory;  // the model
  EngineOptions engine;
  int tokens = 8000;  // the prompt
  int repeats = 1;    // each with a prompt of its own; medians reported
  // Where each run's disk cache folder is made (and removed afterwards);
  // empty: the system's temporary folder.
  std::string folder;
};

// Measures the workload; throws UsageError for a prompt the model or the
// cache cannot hold, and what the disk tier throws when it cannot open.
nlohmann::ordered_json measure_disk_resume(const DiskResumeWorkload& workload);

// The figures as lines of text, for bench without --json.
void print_disk_resume(const nlohmann::ordered_json& result);

}  // namespace quire::cli
