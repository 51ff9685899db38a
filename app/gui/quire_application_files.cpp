// The File menu's exports and imports, the chat list's export actions, chat
// files dropped onto the window (images dropped there are attached), and the
// attach dialog.

#include <QAction>
#include <QDir>
#include <QFileInfo>
#include <QLocale>
#include <QStandardPaths>
#include <QStatusBar>

#include "chat_controller.h"
#include "chat_export_files.h"
#include "file_drop.h"
#include "main_window.h"
#include "pending_images.h"
#include "quire/app/store/chat_export.h"
#include "quire/app/store/chat_import.h"
#include "quire/ui/chat_list_widget.h"
#include "quire/ui/input_box.h"
#include "quire_application.h"

namespace quire::gui {
namespace {

enum class ExportFormat { Json, Markdown, Html, Pdf };

struct FormatInfo {
  QString extension;
  QString filter;
};

FormatInfo export_format_info(ExportFormat format) {
  switch (format) {
    case ExportFormat::Json:
      return {QStringLiteral("json"), QObject::tr("Quire chats (*.json)")};
    case ExportFormat::Markdown:
      return {QStringLiteral("md"), QObject::tr("Markdown (*.md)")};
    case ExportFormat::Html:
      return {QStringLiteral("html"), QObject::tr("Web page (*.html)")};
    case ExportFormat::Pdf:
      return {QStringLiteral("pdf"), QObject::tr("PDF (*.pdf)")};
  }
  return {};
}

}  // namespace

void QuireApplication::wireFiles() {
  // With a closing separator: some file dialogs take a folder path without
  // one as a file name to fill in ("Documents") instead of the folder to open.
  const QString documents =
      QDir(QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation)).absolutePath() +
      u'/';
  // Adds every chat of the file; says how many and from what.
  const auto import_file = [this](const QString& path) {
    QString error;
    const std::optional<store::ImportedChats> imported =
        store::import_chat_file(store_, path, &error);
    if (!imported) return window_->showNotice(error);
    selectChat(imported->chats.front());
    const QString name = QFileInfo(path).fileName();
    window_->statusBar()->showMessage(
        imported->chats.size() == 1 ? tr("Imported 1 chat from %1 (%2)").arg(name, imported->format)
                                    : tr("Imported %1 chats from %2 (%3)")
                                          .arg(imported->chats.size())
                                          .arg(name, imported->format),
        kStatusMessageMs);
  };
  connect(window_->importAction(), &QAction::triggered, this, [this, documents, import_file] {
    const QString path = chooseFile(
        tr("Import chats"), documents,
        tr("Chat exports: Quire, ChatGPT conversations.json, Open WebUI, LM Studio (*.json);;"
           "All files (*)"),
        false);
    if (!path.isEmpty()) import_file(path);
  });
  // Onto the window anywhere, and onto the chat list in particular (it is
  // where chats appear).
  for (QWidget* target :
       {static_cast<QWidget*>(window_.get()), static_cast<QWidget*>(window_->chatList())}) {
    auto* drop = new FileDropTarget(target);
    connect(drop, &FileDropTarget::filesDropped, this,
            [this, import_file](const QStringList& paths) {
              // Images go to the message being written; other files are chats to import.
              QStringList images;
              for (const QString& path : paths) {
                if (ui::is_image_file_name(path))
                  images << path;
                else
                  import_file(path);
              }
              if (!images.isEmpty()) {
                window_->showChat();
                chats_->pendingImages().attachFiles(images);
              }
            });
  }

  // Attach (the button beside the message box, the Chat menu, Ctrl+Shift+A).
  connect(window_->input(), &ui::InputBox::attachRequested, this, [this] {
    const QString pictures = QStandardPaths::writableLocation(QStandardPaths::PicturesLocation);
    const QString path =
        chooseFile(tr("Attach an image"), pictures, PendingImages::fileFilter(), false);
    if (!path.isEmpty()) chats_->pendingImages().attachFiles({path});
  });
  connect(&chats_->pendingImages(), &PendingImages::problem, this,
          [this](const QString& text) { window_->showNotice(text); });

  const auto exporter = [this, documents](ExportFormat format) {
    const std::optional<store::ChatId> chat = chats_->currentChat();
    const std::optional<store::ChatSummary> summary = chat ? store_.chat(*chat) : std::nullopt;
    if (!summary) {
      window_->showNotice(tr("Open a chat to export it."), MainWindow::Notice::Info);
      return;
    }
    const FormatInfo info = export_format_info(format);
    const QString suggested =
        QDir(documents).filePath(store::export_file_name(summary->title, info.extension));
    QString path = chooseFile(tr("Export “%1”").arg(summary->title), suggested, info.filter, true);
    if (path.isEmpty()) return;
    // Not every file dialog adds the format's extension to a typed name.
    if (QFileInfo(path).suffix().isEmpty()) path += u'.' + info.extension;
    const store::ExportScope scope = window_->exportAllBranchesAction()->isChecked()
                                         ? store::ExportScope::WholeTree
                                         : store::ExportScope::CurrentBranch;
    QString error;
    bool written = false;
    switch (format) {
      case ExportFormat::Json:
        written = store::export_chat_json(store_, *chat, path, &error);
        break;
      case ExportFormat::Markdown:
        written = store::export_chat_markdown(store_, *chat, path, scope, &error);
        break;
      case ExportFormat::Html:
        written = exportChatHtml(store_, *chat, path, scope, &error);
        break;
      case ExportFormat::Pdf:
        written =
            exportChatPdf(store_, *chat, path, scope, ui::pageSizeForLocale(QLocale()), &error);
        break;
    }
    if (!written) return window_->showNotice(error);
    window_->statusBar()->showMessage(
        tr("Exported “%1” to %2").arg(summary->title, QDir::toNativeSeparators(path)),
        kStatusMessageMs);
  };
  connect(window_->exportJsonAction(), &QAction::triggered, this,
          [exporter] { exporter(ExportFormat::Json); });
  connect(window_->exportMarkdownAction(), &QAction::triggered, this,
          [exporter] { exporter(ExportFormat::Markdown); });
  connect(window_->exportHtmlAction(), &QAction::triggered, this,
          [exporter] { exporter(ExportFormat::Html); });
  connect(window_->exportPdfAction(), &QAction::triggered, this,
          [exporter] { exporter(ExportFormat::Pdf); });
}

}  // namespace quire::gui
