#pragma once

// Model directories for the prompt format detection test. Kept out of the
// test's own file because moc cannot read C++ raw string literals.

#include <QByteArray>
#include <QMap>
#include <QString>
#include <optional>
#include <vector>

#include "quire/engine/generator/prompt_format.h"

namespace quire::test {

using DetectionFiles = QMap<QString, QByteArray>;  // file name -> contents

struct DetectionSample {
  const char* name;
  DetectionFiles files;
  std::optional<engine::PromptFormatId> expected;
};

std::vector<DetectionSample> detection_samples();

}  // namespace quire::test
