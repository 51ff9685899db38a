#pragma once

// quire's command line. --help and --version are answered before any
// QApplication exists, so they work without a display (over ssh, in scripts,
// in a package's build checks).

#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QString>
#include <optional>

namespace quire::gui {

struct CommandLine {
  QCommandLineParser parser;
  QCommandLineOption model{{QStringLiteral("m"), QStringLiteral("model")},
                           QStringLiteral("Load the model in DIR (this run only)."),
                           QStringLiteral("DIR")};
  QCommandLineOption data_dir{
      QStringLiteral("data-dir"),
      QStringLiteral("Keep chats and settings in DIR instead of the user's folders."),
      QStringLiteral("DIR")};
  QCommandLineOption demo{QStringLiteral("demo"),
                          QStringLiteral("Load the bundled demo model when no model is "
                                         "configured.")};
  QCommandLineOption self_test{
      QStringLiteral("self-test"),
      QStringLiteral("Load the demo model (or --model), generate a reply through the whole "
                     "program, print it and exit: 0 when it worked.")};

  CommandLine();
};

// "quire 0.1.0 (commit 3f2a9c1)".
QString version_line();

// Answers --help (-h, -?) and --version (-v) on standard output and returns
// the exit code; nullopt when the arguments ask for neither. Creates no GUI
// application, so it needs no display.
std::optional<int> answer_without_display(int argc, char* argv[]);

}  // namespace quire::gui
