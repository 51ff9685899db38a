#include "quire/remote/api_key_store.h"

#include <qt6keychain/keychain.h>

namespace quire::remote {
namespace {

const QString kService = QStringLiteral("Quire");

QString entry_name(const QString& endpoint) {
  return QStringLiteral("remote-endpoint ") + endpoint;
}

QString keyring_problem(const QKeychain::Job& job) {
  return QStringLiteral(
             "The desktop keyring could not keep the API key (%1), so Quire holds it "
             "only until it quits. Start a keyring service (GNOME Keyring or "
             "KWallet) to keep it across restarts.")
      .arg(job.errorString());
}

}  // namespace

void MemoryKeyStore::read(const QString& endpoint, ReadDone done) {
  done(keys_.value(endpoint), QString());
}

void MemoryKeyStore::write(const QString& endpoint, const QString& key, WriteDone done) {
  if (key.isEmpty()) {
    keys_.remove(endpoint);
  } else {
    keys_.insert(endpoint, key);
  }
  done(QString());
}

KeyringStore::KeyringStore(QObject* parent) : ApiKeyStore(parent) {}

void KeyringStore::read(const QString& endpoint, ReadDone done) {
  auto* job = new QKeychain::ReadPasswordJob(kService, this);
  job->setKey(entry_name(endpoint));
  connect(job, &QKeychain::Job::finished, this, [this, job, endpoint, done = std::move(done)] {
    switch (job->error()) {
      case QKeychain::NoError:
        done(job->textData(), QString());
        return;
      case QKeychain::EntryNotFound:
        // Perhaps kept for this session after the keyring refused it.
        session_.read(endpoint, done);
        return;
      default:
        session_.read(endpoint,
                      [done, problem = keyring_problem(*job)](const QString& key, const QString&) {
                        done(key, key.isEmpty() ? QString() : problem);
                      });
        return;
    }
  });
  job->start();
}

void KeyringStore::write(const QString& endpoint, const QString& key, WriteDone done) {
  QKeychain::Job* job = nullptr;
  if (key.isEmpty()) {
    auto* remove = new QKeychain::DeletePasswordJob(kService, this);
    remove->setKey(entry_name(endpoint));
    job = remove;
  } else {
    auto* store = new QKeychain::WritePasswordJob(kService, this);
    store->setKey(entry_name(endpoint));
    store->setTextData(key);
    job = store;
  }
  connect(job, &QKeychain::Job::finished, this, [this, job, endpoint, key, done = std::move(done)] {
    const bool kept = job->error() == QKeychain::NoError ||
                      (key.isEmpty() && job->error() == QKeychain::EntryNotFound);
    session_.write(endpoint, kept ? QString() : key, [](const QString&) {});
    done(kept ? QString() : keyring_problem(*job));
  });
  job->start();
}

}  // namespace quire::remote
