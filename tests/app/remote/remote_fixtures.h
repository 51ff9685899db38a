#pragma once

// The recorded streams of fixtures/ (SOURCES.md says where each comes from),
// and what each must read as; the endpoint of a local fake engine.

#include <QByteArray>
#include <QFile>
#include <QString>
#include <QTest>
#include <QUrl>
#include <optional>

#include "quire/remote/remote_client.h"

namespace quire::test {

inline QByteArray remote_fixture(const char* name) {
  QFile file(QStringLiteral(QUIRE_REMOTE_FIXTURES "/") + QString::fromLatin1(name));
  if (!file.open(QIODevice::ReadOnly)) qFatal("missing fixture %s", name);
  return file.readAll();
}

// The endpoint a user would type for `typed` (a fake engine's url()), with `key`.
inline remote::RemoteEndpoint endpoint_at(const QString& typed, const QString& key = {}) {
  QString error;
  const std::optional<QUrl> base = remote::endpoint_base_url(typed, &error);
  if (!base) qFatal("%s", qPrintable(error));
  return remote::RemoteEndpoint{*base, key};
}

}  // namespace quire::test
