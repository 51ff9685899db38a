#pragma once

// `quire --self-test`: loads a model (the bundled demo model unless one is
// given), sends one message through the whole program — the store, the
// engine thread, the generator, the chat view — and reports the reply. For
// installation checks: exit status 0 only when a reply with tokens came back
// and was stored.

#include <QString>

namespace quire::gui {

struct SelfTestOptions {
  QString model;     // a model folder; empty: the demo model
  QString data_dir;  // where the test chat is stored; empty: a temporary folder
  QString message = QStringLiteral("Hello!");
  int timeout_ms = 300'000;
};

// Runs the event loop until the test ends; prints what it did to stdout and
// why it failed to stderr. Returns the exit status.
int run_self_test(const SelfTestOptions& options);

}  // namespace quire::gui
