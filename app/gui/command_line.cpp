#include "command_line.h"

#include <QCoreApplication>
#include <QStringList>
#include <cstdio>
#include <cstring>

#include "build_info.h"

namespace quire::gui {

CommandLine::CommandLine() {
  parser.setApplicationDescription(
      QStringLiteral("Chat with local language models over a paged, prefix-cached KV cache."));
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addOptions({model, data_dir, demo, self_test});
}

QString version_line() {
  return QStringLiteral("quire %1 (commit %2)")
      .arg(QString::fromLatin1(build_version()), QString::fromLatin1(build_commit()));
}

std::optional<int> answer_without_display(int argc, char* argv[]) {
  bool asked = false;
  for (int i = 1; i < argc; ++i) {
    for (const char* flag : {"-h", "-?", "--help", "--help-all", "-v", "--version"}) {
      asked = asked || std::strcmp(argv[i], flag) == 0;
    }
  }
  if (!asked) return std::nullopt;
  // A core application reads the arguments the way the GUI one would, and
  // needs no display.
  QCoreApplication core(argc, argv);
  QCoreApplication::setApplicationName(QStringLiteral("quire"));
  QCoreApplication::setApplicationVersion(QString::fromLatin1(build_version()));
  CommandLine line;
  if (!line.parser.parse(QCoreApplication::arguments())) {
    std::fprintf(stderr, "quire: %s\n", qPrintable(line.parser.errorText()));
    return 2;
  }
  if (line.parser.isSet(QStringLiteral("version"))) {
    std::printf("%s\n", qPrintable(version_line()));
    return 0;
  }
  std::printf("%s", qPrintable(line.parser.helpText()));
  return 0;
}

}  // namespace quire::gui
