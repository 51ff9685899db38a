#pragma once

// Adding or editing one tool server: its name, how it is reached (a program
// on this computer, or an address), and the call timeout. Problems show under
// the field concerned as they are typed, and Save stays disabled until there
// are none.
//
// Object names: "toolServerName", "toolServerTransport" (item data "stdio" or
// "http"), "toolServerCommand", "toolServerArguments" (one per line),
// "toolServerEnvironment" (NAME=value lines), "toolServerWorkingDirectory",
// "toolServerUrl", "toolServerHeaders" (Name: value lines),
// "toolServerTimeout", "toolServerSave"; each field's problems in a label
// named after it with "Issue" appended ("toolServerNameIssue").

#include <QDialog>
#include <QList>
#include <QStringList>

#include "quire/ui/tool_server_settings.h"

class QComboBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;

namespace quire::ui {

class ToolServerDialog : public QDialog {
  Q_OBJECT

 public:
  // Shows `entry`; `taken_names` are the other servers' names, which this
  // one may not take.
  ToolServerDialog(const ToolServerEntry& entry, const QStringList& taken_names,
                   QWidget* parent = nullptr);

  // What the fields say, read into an entry (names and the address trimmed;
  // lines that cannot be read are left out and reported by issues()).
  ToolServerEntry entry() const;
  // Everything that keeps Save disabled, in the order of the fields.
  QList<ToolServerIssue> issues() const;

 private:
  void writeFields(const ToolServerEntry& entry);
  void refresh();

  ToolServerEntry shown_;  // keeps what the dialog has no field for
  QStringList taken_names_;
  QFormLayout* form_ = nullptr;
  QLineEdit* name_ = nullptr;
  QComboBox* transport_ = nullptr;
  QList<QWidget*> stdio_rows_;  // the fields shown for a program
  QList<QWidget*> http_rows_;   // and for an address
  QLineEdit* command_ = nullptr;
  QPlainTextEdit* arguments_ = nullptr;
  QPlainTextEdit* environment_ = nullptr;
  QLineEdit* working_directory_ = nullptr;
  QLineEdit* url_ = nullptr;
  QPlainTextEdit* headers_ = nullptr;
  QSpinBox* timeout_ = nullptr;
  QList<QLabel*> issue_labels_;  // one per ToolServerIssue::Field, in its order
  QPushButton* save_ = nullptr;
};

}  // namespace quire::ui
