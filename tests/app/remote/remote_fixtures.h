#pragma once

// The recorded streams of fixtures/ (SOURCES.md says where each comes from),
// and what each must read as.

#include <QByteArray>
#include <QFile>
#include <QString>
#include <QTest>

namespace quire::test {

inline QByteArray remote_fixture(const char* name) {
  QFile file(QStringLiteral(QUIRE_REMOTE_FIXTURES "/") + QString::fromLatin1(name));
  if (!file.open(QIODevice::ReadOnly)) qFatal("missing fixture %s", name);
  return file.readAll();
}

}  // namespace quire::test
