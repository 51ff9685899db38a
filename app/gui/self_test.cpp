#include "self_test.h"

#include <QCoreApplication>
#include <QDir>
#include <QTemporaryDir>
#include <QTimer>
#include <cstdio>

#include "chat_controller.h"
#include "quire_application.h"
#include "reply_stats.h"

namespace quire::gui {
namespace {

void print(FILE* stream, const QString& text) {
  std::fputs(qPrintable(text + u'\n'), stream);
  std::fflush(stream);
}

}  // namespace

int run_self_test(const SelfTestOptions& options) {
  ApplicationOptions app_options;
  app_options.demo_model = demo_model_directory();
  app_options.model_override = options.model.isEmpty() ? app_options.demo_model : options.model;
  if (app_options.model_override.isEmpty()) {
    print(stderr, QStringLiteral("self-test: no model: this installation has no demo model "
                                 "(share/quire/demo-model); pass --model DIR"));
    return 1;
  }
  // A temporary folder unless told otherwise: a check must not touch the
  // user's chats or settings.
  QTemporaryDir scratch;
  app_options.data_dir = options.data_dir.isEmpty() ? scratch.path() : options.data_dir;
  // Nor the user's disk cache: its pages go with the folder.
  app_options.disk_cache_dir = QDir(app_options.data_dir).filePath(QStringLiteral("pages"));
  app_options.sample_interval_ms = 60'000;

  int status = 1;
  QuireApplication app(app_options);
  QObject::connect(&app, &QuireApplication::modelLoaded, &app, [&](const ModelInfo& info) {
    print(stdout,
          QStringLiteral("self-test: loaded %1 (%2, %3 cache, %4 parameters)")
              .arg(info.directory, info.devices.join(QStringLiteral(", ")), info.cache_format)
              .arg(info.parameters));
    print(stdout, QStringLiteral("self-test: user: %1").arg(options.message));
    app.chats().send(options.message);
  });
  QObject::connect(&app, &QuireApplication::loadFailed, &app, [&](const EngineFailure& failure) {
    print(stderr, QStringLiteral("self-test: the model did not load: %1").arg(failure.text()));
    QCoreApplication::exit(1);
  });
  QObject::connect(
      &app.chats(), &ChatController::replyFinished, &app,
      [&](store::ChatId chat, const store::GenerationStats& stats) {
        const QList<store::Message> messages = app.store().messages(chat);
        const QString reply = messages.isEmpty() ? QString() : messages.last().text;
        print(stdout, QStringLiteral("self-test: reply: %1").arg(reply));
        print(stdout, QStringLiteral("self-test: %1").arg(stats_text(stats)));
        const bool stored = messages.size() == 2 &&
                            messages.last().role == store::Role::Assistant && !reply.isEmpty();
        if (stats.generated_tokens > 0 && stored) {
          print(stdout, QStringLiteral("self-test: passed"));
          QCoreApplication::exit(0);
        } else {
          print(stderr, QStringLiteral("self-test: the reply was %1 (%2 tokens)")
                            .arg(stored ? QStringLiteral("stored") : QStringLiteral("not stored"))
                            .arg(stats.generated_tokens));
          QCoreApplication::exit(1);
        }
      });
  QTimer::singleShot(options.timeout_ms, &app, [&] {
    print(stderr, QStringLiteral("self-test: no reply within %1 s").arg(options.timeout_ms / 1000));
    QCoreApplication::exit(1);
  });
  app.start();
  status = QCoreApplication::exec();
  return status;
}

}  // namespace quire::gui
