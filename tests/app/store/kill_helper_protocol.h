#pragma once

// What the kill helper writes, so that the test can tell what must have survived.

#include <QString>

namespace quire::store::kill_test {

inline const QString kQuestion = QStringLiteral("Write a long poem about SQLite — and don't stop.");

inline constexpr int kPieceIntervalMs = 20;

// Piece i of the reply; pieces vary in length and carry non-ASCII text.
inline QString piece(int i) {
  return QStringLiteral("verse %1: %2; ").arg(i).arg(QString(i % 7 + 1, QChar(0x00e9)));
}

}  // namespace quire::store::kill_test
