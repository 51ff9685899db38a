#pragma once

// --disk-cache DIR and --disk-cache-size SIZE: the KV cache's disk tier for
// the commands that generate (generate, chat, replay, serve, bench), so that
// a conversation's pages outlive the process, and the lines they print
// about it. The tier is a cache, not the job: when it cannot open, the
// command says why in one line and goes on without it.

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

#include "quire/engine/generator/job.h"
#include "quire/engine/runtime/disk_tier.h"
#include "quire/engine/runtime/model_runtime.h"

namespace CLI {
class App;
}

namespace quire::cli {

struct DiskCacheOptions {
  std::string folder;  // empty: no disk tier
  std::string size;    // empty: engine::kDefaultDiskCacheBytes

  void add_to(CLI::App& command);
  // The tier's options, nullopt without --disk-cache. Throws UsageError for a
  // size that is not one, or a size without a folder; commands call it
  // before loading the model.
  std::optional<engine::DiskTierOptions> tier_options() const;
};

// Opens the disk tier on the runtime. When it cannot (a folder that cannot
// be made or written, a model whose cache the tier cannot keep), says so in
// one line on `err` and returns false: the runtime goes on without one.
bool open_disk_cache(engine::ModelRuntime& runtime, const engine::DiskTierOptions& options,
                     std::ostream& err);

// Writes the device cache's pages that the disk lacks (ModelRuntime::
// archive_cache), for the end of a command or a server's shutdown, and says
// in one line on `err` how many pages it wrote, or what went wrong; nothing
// when there was nothing to write, or no disk tier. Returns the pages written.
std::uint64_t archive_disk_cache(engine::ModelRuntime& runtime, std::ostream& err);

// " (29952 from disk)" for the lines that end a reply, when the runtime has
// a disk tier; empty otherwise.
std::string disk_tokens_note(const engine::ModelRuntime& runtime,
                             const engine::JobStatistics& statistics);

}  // namespace quire::cli
