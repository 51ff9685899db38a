#pragma once

// The settings of a remote OpenAI-compatible engine: its address, its API
// key and the model it serves, with "List models" to fill the model field
// from the engine itself. An address makes the chats go to that engine; an
// empty one runs the model folder here. The key is never part of the
// settings file: the panel hands it to the application, which keeps it in
// the desktop keyring.
//
// Object names: "remoteUrl", "remoteKey", "remoteModel", "listRemoteModels",
// "remoteStatus".

#include <QGroupBox>
#include <QString>
#include <QStringList>

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace quire::ui {

class RemoteEndpointFields : public QGroupBox {
  Q_OBJECT

 public:
  explicit RemoteEndpointFields(QWidget* parent = nullptr);

  void setValues(const QString& url, const QString& model);
  QString url() const;
  QString model() const;

  // The key stored for the address shown; not an edit.
  void setKey(const QString& key);
  QString key() const;
  // The key was typed since setKey() or markKeyApplied().
  bool keyEdited() const { return key_edited_; }
  void markKeyApplied() { key_edited_ = false; }

  // The engine's answer to listModelsRequested: its models, or why there are none.
  void setModels(const QStringList& models, const QString& problem);
  // "Asking <url> for its models…" in the status line, while an answer is awaited.
  void showAsking(const QString& url);
  // A problem with the address that keeps Apply disabled; "" clears it.
  void setIssue(const QString& issue);

 signals:
  void edited();
  void listModelsRequested(const QString& url, const QString& key);

 private:
  QLineEdit* url_ = nullptr;
  QLineEdit* key_ = nullptr;
  QComboBox* model_ = nullptr;
  QPushButton* list_ = nullptr;
  QLabel* status_ = nullptr;
  QLabel* issue_ = nullptr;
  bool key_edited_ = false;
  bool writing_ = false;
};

}  // namespace quire::ui
