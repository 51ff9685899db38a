#pragma once

// Where the API keys of remote endpoints are kept: the desktop's keyring
// (Secret Service or KWallet, through QtKeychain), never the settings file.
// Where no keyring answers, a key is kept in memory until the program quits
// and the caller is told so, in words a user can act on. Each key is filed
// under its endpoint's base URL.

#include <QHash>
#include <QObject>
#include <QString>
#include <functional>

namespace quire::remote {

class ApiKeyStore : public QObject {
  Q_OBJECT

 public:
  // `problem` is empty when the keyring did its work; otherwise it says why
  // the key lives only in memory for this session.
  using ReadDone = std::function<void(const QString& key, const QString& problem)>;
  using WriteDone = std::function<void(const QString& problem)>;

  using QObject::QObject;

  // The key filed for `endpoint`, "" when none is.
  virtual void read(const QString& endpoint, ReadDone done) = 0;
  // Files `key` for `endpoint`; an empty key removes the entry.
  virtual void write(const QString& endpoint, const QString& key, WriteDone done) = 0;
};

// Keys in memory only: the fallback of the keyring store, and the store of
// tests, which have no desktop session.
class MemoryKeyStore : public ApiKeyStore {
  Q_OBJECT

 public:
  using ApiKeyStore::ApiKeyStore;
  void read(const QString& endpoint, ReadDone done) override;
  void write(const QString& endpoint, const QString& key, WriteDone done) override;

 private:
  QHash<QString, QString> keys_;
};

// The desktop keyring, under the service name "Quire".
class KeyringStore : public ApiKeyStore {
  Q_OBJECT

 public:
  explicit KeyringStore(QObject* parent = nullptr);
  void read(const QString& endpoint, ReadDone done) override;
  void write(const QString& endpoint, const QString& key, WriteDone done) override;

 private:
  // Keys the keyring refused to keep, held for this session.
  MemoryKeyStore session_;
};

}  // namespace quire::remote
