#include "quire/ui/tool_server_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <algorithm>

#include "wheel_guard.h"

namespace quire::ui {
namespace {

using Field = ToolServerIssue::Field;
constexpr int kFieldCount = static_cast<int>(Field::Headers) + 1;

QPlainTextEdit* lines_field(const QString& name, const QString& placeholder, QWidget* parent) {
  auto* box = new QPlainTextEdit(parent);
  box->setObjectName(name);
  box->setPlaceholderText(placeholder);
  box->setTabChangesFocus(true);
  box->setLineWrapMode(QPlainTextEdit::NoWrap);
  box->setFixedHeight(box->fontMetrics().lineSpacing() * 4 + 12);
  return box;
}

// A red line under a field, hidden while the field has no problem.
QLabel* add_issue_row(QFormLayout* form, QWidget* parent, const QString& field_name) {
  auto* label = new QLabel(parent);
  label->setObjectName(field_name + QStringLiteral("Issue"));
  label->setStyleSheet(QStringLiteral("color: #c62828;"));
  label->setWordWrap(true);
  label->setTextFormat(Qt::PlainText);
  form->addRow(QString(), label);
  form->setRowVisible(label, false);
  return label;
}

QStringList non_blank_lines(const QString& text) {
  QStringList lines;
  for (const QString& line : text.split(u'\n')) {
    if (!line.trimmed().isEmpty()) lines << line.trimmed();
  }
  return lines;
}

}  // namespace

ToolServerDialog::ToolServerDialog(const ToolServerEntry& entry, const QStringList& taken_names,
                                   QWidget* parent)
    : QDialog(parent), shown_(entry), taken_names_(taken_names) {
  setObjectName(QStringLiteral("toolServerDialog"));
  setWindowTitle(entry.name.isEmpty() ? tr("Add a tool server") : tr("Edit tool server"));
  form_ = new QFormLayout(this);
  QFormLayout* form = form_;
  issue_labels_.resize(kFieldCount);

  name_ = new QLineEdit(this);
  name_->setObjectName(QStringLiteral("toolServerName"));
  name_->setPlaceholderText(tr("e.g. files"));
  form->addRow(tr("Name"), name_);
  issue_labels_[static_cast<int>(Field::Name)] = add_issue_row(form, this, name_->objectName());

  transport_ = new QComboBox(this);
  transport_->setObjectName(QStringLiteral("toolServerTransport"));
  transport_->addItem(tr("A program on this computer (stdio)"), QStringLiteral("stdio"));
  transport_->addItem(tr("A server at an address (HTTP)"), QStringLiteral("http"));
  form->addRow(tr("Runs as"), transport_);

  // Both transports' fields in the one form, so that their labels line up;
  // the other transport's rows are hidden and keep what was typed, for
  // switching back.
  command_ = new QLineEdit(this);
  command_->setObjectName(QStringLiteral("toolServerCommand"));
  command_->setPlaceholderText(tr("e.g. npx, uvx, or the path of the server's program"));
  form->addRow(tr("Program"), command_);
  issue_labels_[static_cast<int>(Field::Command)] =
      add_issue_row(form, this, command_->objectName());
  arguments_ = lines_field(QStringLiteral("toolServerArguments"),
                           tr("One argument per line, passed as written (no shell)\n"
                              "-y\n@modelcontextprotocol/server-filesystem\n/home/me/Documents"),
                           this);
  form->addRow(tr("Arguments"), arguments_);
  environment_ = lines_field(QStringLiteral("toolServerEnvironment"),
                             tr("NAME=value, one per line, added to Quire's environment"), this);
  form->addRow(tr("Environment"), environment_);
  issue_labels_[static_cast<int>(Field::Environment)] =
      add_issue_row(form, this, environment_->objectName());
  working_directory_ = new QLineEdit(this);
  working_directory_->setObjectName(QStringLiteral("toolServerWorkingDirectory"));
  working_directory_->setPlaceholderText(tr("Optional: the folder the program starts in"));
  form->addRow(tr("Working folder"), working_directory_);
  issue_labels_[static_cast<int>(Field::WorkingDirectory)] =
      add_issue_row(form, this, working_directory_->objectName());
  stdio_rows_ = {command_, arguments_, environment_, working_directory_};

  url_ = new QLineEdit(this);
  url_->setObjectName(QStringLiteral("toolServerUrl"));
  url_->setPlaceholderText(QStringLiteral("http://localhost:3000/mcp"));
  form->addRow(tr("Address"), url_);
  issue_labels_[static_cast<int>(Field::Url)] = add_issue_row(form, this, url_->objectName());
  headers_ = lines_field(QStringLiteral("toolServerHeaders"),
                         tr("Name: value, one per line, e.g. Authorization: Bearer …"), this);
  form->addRow(tr("Headers"), headers_);
  issue_labels_[static_cast<int>(Field::Headers)] =
      add_issue_row(form, this, headers_->objectName());
  http_rows_ = {url_, headers_};

  timeout_ = new QSpinBox(this);
  timeout_->setObjectName(QStringLiteral("toolServerTimeout"));
  timeout_->setRange(limits::kToolCallTimeoutSeconds.min, limits::kToolCallTimeoutSeconds.max);
  timeout_->setSuffix(tr(" s"));
  timeout_->setToolTip(
      tr("A call without an answer after this long is stopped, and the model "
         "is told it timed out."));
  form->addRow(tr("Call timeout"), timeout_);

  auto* note = new QLabel(tr("The values here are saved with Quire's settings, as typed."), this);
  note->setWordWrap(true);
  note->setForegroundRole(QPalette::PlaceholderText);
  form->addRow(note);

  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
  save_ = buttons->addButton(tr("Save"), QDialogButtonBox::AcceptRole);
  save_->setObjectName(QStringLiteral("toolServerSave"));
  save_->setDefault(true);
  connect(buttons, &QDialogButtonBox::accepted, this, [this] {
    if (issues().isEmpty()) accept();
  });
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  form->addRow(buttons);

  writeFields(entry);
  for (QLineEdit* line : {name_, command_, working_directory_, url_})
    connect(line, &QLineEdit::textChanged, this, &ToolServerDialog::refresh);
  for (QPlainTextEdit* box : {arguments_, environment_, headers_})
    connect(box, &QPlainTextEdit::textChanged, this, &ToolServerDialog::refresh);
  connect(transport_, &QComboBox::currentIndexChanged, this, [this] {
    refresh();
    // The other transport has fewer or more rows: fit the dialog to them.
    resize(width(), sizeHint().height());
  });
  guard_wheel_in(this);
  refresh();
  resize(560, sizeHint().height());
}

void ToolServerDialog::writeFields(const ToolServerEntry& entry) {
  name_->setText(entry.name);
  transport_->setCurrentIndex(std::max(0, transport_->findData(transport_id(entry.transport))));
  command_->setText(entry.command);
  arguments_->setPlainText(entry.arguments.join(u'\n'));
  environment_->setPlainText(environment_lines(entry.environment));
  working_directory_->setText(entry.working_directory);
  url_->setText(entry.url);
  headers_->setPlainText(header_lines(entry.headers));
  timeout_->setValue(entry.call_timeout_seconds);
}

ToolServerEntry ToolServerDialog::entry() const {
  ToolServerEntry e = shown_;
  e.name = name_->text().trimmed();
  e.transport = parse_transport(transport_->currentData().toString());
  e.command = command_->text().trimmed();
  e.arguments = non_blank_lines(arguments_->toPlainText());
  e.environment = parse_environment_lines(environment_->toPlainText()).values;
  e.working_directory = working_directory_->text().trimmed();
  e.url = url_->text().trimmed();
  e.headers = parse_header_lines(headers_->toPlainText()).values;
  e.call_timeout_seconds = timeout_->value();
  return e;
}

QList<ToolServerIssue> ToolServerDialog::issues() const {
  const ToolServerEntry edited = entry();
  QList<ToolServerIssue> found = validate_tool_server(edited, taken_names_);
  // Lines that could not be read are missing from the entry: say so.
  if (edited.transport == ToolServerEntry::Transport::Stdio) {
    for (const QString& problem : parse_environment_lines(environment_->toPlainText()).problems)
      found.append({Field::Environment, problem});
  } else {
    for (const QString& problem : parse_header_lines(headers_->toPlainText()).problems)
      found.append({Field::Headers, problem});
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return static_cast<int>(a.field) < static_cast<int>(b.field);
  });
  return found;
}

void ToolServerDialog::refresh() {
  const bool stdio = transport_->currentData().toString() == u"stdio";
  for (QWidget* field : std::as_const(stdio_rows_))
    form_->setRowVisible(field, stdio);
  for (QWidget* field : std::as_const(http_rows_))
    form_->setRowVisible(field, !stdio);
  const QList<ToolServerIssue> found = issues();
  for (int field = 0; field < kFieldCount; ++field) {
    QStringList lines;
    for (const ToolServerIssue& issue : found) {
      if (static_cast<int>(issue.field) == field) lines << issue.message;
    }
    QLabel* label = issue_labels_[field];
    label->setText(lines.join(u'\n'));
    form_->setRowVisible(label, !lines.isEmpty());
  }
  save_->setEnabled(found.isEmpty());
}

}  // namespace quire::ui
