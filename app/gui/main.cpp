// quire: the desktop application.

#include <QApplication>
#include <QIcon>

#include "build_info.h"
#include "command_line.h"
#include "quire_application.h"
#include "self_test.h"

int main(int argc, char* argv[]) {
  // Before QApplication, which needs a display and exits without one.
  if (const std::optional<int> answered = quire::gui::answer_without_display(argc, argv)) {
    return *answered;
  }

  QApplication application(argc, argv);
  QApplication::setOrganizationName(quire::app::AppSettings::kOrganization);
  QApplication::setApplicationName(quire::app::AppSettings::kApplication);
  QApplication::setApplicationDisplayName(QStringLiteral("Quire"));
  QApplication::setApplicationVersion(QString::fromLatin1(quire::gui::build_version()));
  QApplication::setDesktopFileName(QStringLiteral("app.quire.Quire"));
  QApplication::setWindowIcon(QIcon::fromTheme(QStringLiteral("app.quire.Quire")));

  quire::gui::CommandLine line;
  line.parser.process(application);

  if (line.parser.isSet(line.self_test)) {
    quire::gui::SelfTestOptions options;
    options.model = line.parser.value(line.model);
    options.data_dir = line.parser.value(line.data_dir);
    return quire::gui::run_self_test(options);
  }

  quire::gui::ApplicationOptions options;
  options.data_dir = line.parser.value(line.data_dir);
  options.model_override = line.parser.value(line.model);
  options.demo_when_unconfigured = line.parser.isSet(line.demo);
  options.demo_model = quire::gui::demo_model_directory();
  quire::gui::QuireApplication quire_app(options);
  quire_app.start();
  quire_app.show();
  return QApplication::exec();
}
