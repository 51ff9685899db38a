#pragma once

// Names for files kept beside the history: backups and set-aside copies.

#include <QString>

namespace quire::store::detail {

// "<dir>/<base>.<tag>.<suffix>", with -2, -3, ... added until neither the file
// nor its -wal/-shm companions exist.
QString unused_sibling(const QString& path, const QString& tag);

}  // namespace quire::store::detail
