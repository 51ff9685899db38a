// quire: the desktop application.

#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>

#include "quire_application.h"
#include "self_test.h"

int main(int argc, char* argv[]) {
  QApplication application(argc, argv);
  QApplication::setOrganizationName(quire::app::AppSettings::kOrganization);
  QApplication::setApplicationName(quire::app::AppSettings::kApplication);
  QApplication::setApplicationDisplayName(QStringLiteral("Quire"));
  QApplication::setApplicationVersion(QStringLiteral(QUIRE_VERSION));
  QApplication::setDesktopFileName(QStringLiteral("app.quire.Quire"));
  QApplication::setWindowIcon(QIcon::fromTheme(QStringLiteral("app.quire.Quire")));

  QCommandLineParser parser;
  parser.setApplicationDescription(
      QStringLiteral("Chat with local language models over a paged, prefix-cached KV cache."));
  parser.addHelpOption();
  parser.addVersionOption();
  const QCommandLineOption model({QStringLiteral("m"), QStringLiteral("model")},
                                 QStringLiteral("Load the model in DIR (this run only)."),
                                 QStringLiteral("DIR"));
  const QCommandLineOption data_dir(
      QStringLiteral("data-dir"),
      QStringLiteral("Keep chats and settings in DIR instead of the user's folders."),
      QStringLiteral("DIR"));
  const QCommandLineOption demo(
      QStringLiteral("demo"),
      QStringLiteral("Load the bundled demo model when no model is configured."));
  const QCommandLineOption self_test(
      QStringLiteral("self-test"),
      QStringLiteral("Load the demo model (or --model), generate a reply through the whole "
                     "program, print it and exit: 0 when it worked."));
  parser.addOptions({model, data_dir, demo, self_test});
  parser.process(application);

  if (parser.isSet(self_test)) {
    quire::gui::SelfTestOptions options;
    options.model = parser.value(model);
    options.data_dir = parser.value(data_dir);
    return quire::gui::run_self_test(options);
  }

  quire::gui::ApplicationOptions options;
  options.data_dir = parser.value(data_dir);
  options.model_override = parser.value(model);
  options.demo_when_unconfigured = parser.isSet(demo);
  options.demo_model = quire::gui::demo_model_directory();
  quire::gui::QuireApplication quire_app(options);
  quire_app.start();
  quire_app.show();
  return QApplication::exec();
}
