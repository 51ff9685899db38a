#pragma once

// What the hub suites share: repositories for the fake Hub, and one snapshot
// download run to its end.

#include <QString>
#include <QStringList>
#include <QTemporaryDir>

#include "fake_hub.h"
#include "quire/hub/hub_client.h"
#include "quire/hub/snapshot_download.h"

namespace hub_test {

// Reproducible bytes of `size` (seeded by `seed`).
QByteArray random_bytes(qsizetype size, quint32 seed);

// A commit id made of one repeated hex digit pair ("ab" -> "abab…").
QString commit_of(const char* pair);

// org/model: config.json (git), model.safetensors (LFS, 300 KiB),
// nested/tokenizer.model (LFS) and README.md on main; a "4.0bpw" branch with
// other weights.
quire::test::FakeRepo sample_repo(const QString& id = QStringLiteral("org/model"));

quire::hub::HubSettings settings_for(const quire::test::FakeHub& hub, const QString& cache_dir,
                                     const QString& token = {});

// Fast tries for the tests: 5 tries, 50 ms apart at first.
quire::hub::RetryPolicy quick_retries();

struct DownloadRun {
  bool ok = false;
  QString folder;  // the snapshot, when ok
  QString error;
  QStringList notes;
};

DownloadRun run_download(const quire::hub::HubSettings& settings,
                         const quire::hub::SnapshotRequest& request,
                         quire::hub::SnapshotOptions options = {});

QByteArray read_file(const QString& path);

}  // namespace hub_test
