#pragma once

// A chat's rules about text: the strings its replies must never show and
// the logit biases it gives to texts (every token of each text, as the
// model's tokenizer spells it). Neither has a global value: an empty list is
// none. Entries are added from the fields below each list and removed with
// the list's Remove button; adding a text again replaces its bias.
//
// Object names: "chatBannedStrings" (the list), "chatBannedStringInput",
// "chatAddBannedString", "chatRemoveBannedString"; "chatTextBiases" (a table
// of text and bias), "chatBiasTextInput", "chatBiasValueInput",
// "chatAddTextBias", "chatRemoveTextBias".

#include <QMap>
#include <QStringList>
#include <QWidget>

class QDoubleSpinBox;
class QLineEdit;
class QListWidget;
class QPushButton;
class QTableWidget;

namespace quire::ui {

class TextRulesEditor : public QWidget {
  Q_OBJECT

 public:
  explicit TextRulesEditor(QWidget* parent = nullptr);

  // Shows the lists; emits nothing.
  void setValue(const QStringList& banned, const QMap<QString, double>& biases);
  QStringList bannedStrings() const;
  QMap<QString, double> textBiases() const;

 signals:
  void changed();

 private:
  void addBanned();
  void addBias();
  void showBiases(const QMap<QString, double>& biases);
  void refreshButtons();

  QListWidget* banned_ = nullptr;
  QLineEdit* banned_input_ = nullptr;
  QPushButton* add_banned_ = nullptr;
  QPushButton* remove_banned_ = nullptr;
  QTableWidget* biases_ = nullptr;
  QLineEdit* bias_text_ = nullptr;
  QDoubleSpinBox* bias_value_ = nullptr;
  QPushButton* add_bias_ = nullptr;
  QPushButton* remove_bias_ = nullptr;
};

}  // namespace quire::ui
