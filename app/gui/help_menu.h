#pragma once

// The Help menu: About (version, commit, the CUDA backend's state, the demo
// model's licenses), the keyboard shortcuts read off the window's own actions
// so the list cannot fall behind them, and the data folder.

#include <QList>
#include <QString>
#include <functional>

class QMenu;
class QWidget;

namespace quire::gui {

struct AboutFacts {
  QString cuda_state;   // "in use", "not used: ...", "not checked yet: no model is loaded"
  QString data_folder;  // where chats and settings are kept
};

// The About dialog's text, as HTML.
QString about_text(const AboutFacts& facts);

struct ShortcutRow {
  QString action;  // "New chat", without the mnemonic's "&" and a trailing "…"
  QString keys;    // "Ctrl+N", as this platform writes it
  friend bool operator==(const ShortcutRow&, const ShortcutRow&) = default;
};

// Every action under `window` that has a shortcut, once each, sorted by
// name, then typed_key_rows().
QList<ShortcutRow> shortcut_rows(const QWidget& window);

// The keys of the message box and of a message being edited, which no action
// carries: Enter and Ctrl+Enter send, Shift+Enter starts a new line, Esc
// cancels an edit.
QList<ShortcutRow> typed_key_rows();

// Adds "About Quire", "Keyboard shortcuts" and "Open the data folder" to
// `menu`; the dialogs open over `window` (object names "aboutDialog" and
// "shortcutsDialog"). `facts` is asked each time About opens.
void fill_help_menu(QMenu& menu, QWidget& window, std::function<AboutFacts()> facts);

}  // namespace quire::gui
