// Writes a chat the way the application does — the user's message, then a
// reply streamed through a ReplyWriter — and reports each step on stdout, until
// the kill test SIGKILLs it. Usage: chat_store_kill_helper <database>

#include <QCoreApplication>
#include <QTimer>
#include <chrono>
#include <cstdio>

#include "kill_helper_protocol.h"
#include "quire/app/store/chat_store.h"
#include "quire/app/store/reply_writer.h"

using namespace quire::store;

namespace {

long long steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void say(const QString& line) {
  std::fputs(qPrintable(line + QLatin1Char('\n')), stdout);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  if (argc != 2) return 2;
  ChatStore store;
  StoreOptions options;
  options.path = QString::fromLocal8Bit(argv[1]);
  if (!store.open(options)) {
    say(QStringLiteral("error ") + store.error_string());
    return 3;
  }
  const auto chat = store.create_chat(QStringLiteral("Killed mid-reply"));
  if (!chat || !store.append_message(*chat, Role::User, kill_test::kQuestion)) return 4;
  say(QStringLiteral("user committed"));
  const auto reply = store.begin_reply(*chat, QStringLiteral("kill-test-model"));
  if (!reply) return 5;

  // The default options: a commit at least every second, as in the application.
  ReplyWriter writer(store, *reply);
  QObject::connect(&writer, &ReplyWriter::committed,
                   [](int length) { say(QStringLiteral("committed %1").arg(length)); });
  int piece = 0;
  QTimer stream;
  QObject::connect(&stream, &QTimer::timeout, [&] {
    const QString delta = kill_test::piece(piece++);
    writer.append(delta, std::vector<std::int32_t>{piece});
    say(QStringLiteral("appended %1 %2 %3").arg(piece).arg(writer.text().size()).arg(steady_ms()));
  });
  stream.start(kill_test::kPieceIntervalMs);
  // Never meant to end on its own; a safety net if the test dies first.
  QTimer::singleShot(60000, &app, &QCoreApplication::quit);
  return app.exec();
}
