#include "quire/hub/download_records.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

namespace quire::hub {
namespace {

constexpr int kFormatVersion = 1;

QStringList strings_of(const QJsonValue& value) {
  QStringList result;
  for (const QJsonValue& item : value.toArray())
    result << item.toString();
  return result;
}

}  // namespace

QList<DownloadRecord> read_download_records(const QString& file, QString* error) {
  QList<DownloadRecord> records;
  QFile in(file);
  if (!in.exists()) return records;
  const auto fail = [&](const QString& why) {
    if (error != nullptr)
      *error = QStringLiteral(
                   "The list of unfinished downloads %1 %2; they are not listed, but "
                   "downloading the same models again resumes their files.")
                   .arg(file, why);
    return QList<DownloadRecord>();
  };
  if (!in.open(QIODevice::ReadOnly)) return fail(QStringLiteral("cannot be read"));
  QJsonParseError parse_error;
  const QJsonDocument document = QJsonDocument::fromJson(in.read(16 * 1024 * 1024), &parse_error);
  if (parse_error.error != QJsonParseError::NoError || !document.isObject())
    return fail(QStringLiteral("is not valid JSON"));
  const QJsonObject root = document.object();
  if (root.value(QStringLiteral("version")).toInt() != kFormatVersion)
    return fail(QStringLiteral("was written by another version of Quire"));
  for (const QJsonValue& value : root.value(QStringLiteral("downloads")).toArray()) {
    const QJsonObject object = value.toObject();
    DownloadRecord record;
    record.id = object.value(QStringLiteral("id")).toString();
    record.repo = object.value(QStringLiteral("repo")).toString();
    record.revision = object.value(QStringLiteral("revision")).toString();
    record.commit = object.value(QStringLiteral("commit")).toString();
    record.subfolder = object.value(QStringLiteral("subfolder")).toString();
    record.title = object.value(QStringLiteral("title")).toString();
    record.paths = strings_of(object.value(QStringLiteral("paths")));
    record.etags = strings_of(object.value(QStringLiteral("etags")));
    record.bytes_total = object.value(QStringLiteral("bytes_total")).toInteger();
    record.bytes_done = object.value(QStringLiteral("bytes_done")).toInteger();
    record.paused = object.value(QStringLiteral("paused")).toBool();
    if (record.id.isEmpty() || record.repo.isEmpty() || record.paths.isEmpty()) continue;
    records << record;
  }
  return records;
}

bool write_download_records(const QString& file, const QList<DownloadRecord>& records,
                            QString* error) {
  QJsonArray list;
  for (const DownloadRecord& record : records) {
    QJsonObject object;
    object.insert(QStringLiteral("id"), record.id);
    object.insert(QStringLiteral("repo"), record.repo);
    object.insert(QStringLiteral("revision"), record.revision);
    object.insert(QStringLiteral("commit"), record.commit);
    object.insert(QStringLiteral("subfolder"), record.subfolder);
    object.insert(QStringLiteral("title"), record.title);
    object.insert(QStringLiteral("paths"), QJsonArray::fromStringList(record.paths));
    object.insert(QStringLiteral("etags"), QJsonArray::fromStringList(record.etags));
    object.insert(QStringLiteral("bytes_total"), record.bytes_total);
    object.insert(QStringLiteral("bytes_done"), record.bytes_done);
    object.insert(QStringLiteral("paused"), record.paused);
    list.append(object);
  }
  QJsonObject root;
  root.insert(QStringLiteral("version"), kFormatVersion);
  root.insert(QStringLiteral("downloads"), list);
  QDir().mkpath(QFileInfo(file).absolutePath());
  QSaveFile out(file);
  if (!out.open(QIODevice::WriteOnly) ||
      out.write(QJsonDocument(root).toJson(QJsonDocument::Indented)) < 0 || !out.commit()) {
    if (error != nullptr)
      *error = QStringLiteral("Cannot save the list of downloads to %1: %2")
                   .arg(file, out.errorString());
    return false;
  }
  return true;
}

}  // namespace quire::hub
