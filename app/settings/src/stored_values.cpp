#include "stored_values.h"

#include <QLocale>
#include <cmath>
#include <limits>

namespace quire::app::stored {
namespace {

bool is_list(const QVariant& value) {
  const int type = value.typeId();
  return type == QMetaType::QStringList || type == QMetaType::QVariantList;
}

// The pieces of a stored list: one string split at commas, or the list
// QSettings already split.
std::optional<QStringList> pieces(const QVariant& value) {
  if (is_list(value)) return value.toStringList();
  const std::optional<QString> whole = text(value);
  if (!whole) return std::nullopt;
  if (whole->trimmed().isEmpty()) return QStringList{};
  return whole->split(QLatin1Char(','));
}

}  // namespace

std::optional<QString> text(const QVariant& value) {
  if (value.typeId() == QMetaType::QString) return value.toString();
  // A hand-written value with a comma arrives as a list; the comma was meant.
  if (value.typeId() == QMetaType::QStringList) return value.toStringList().join(u", ");
  if (value.typeId() == QMetaType::QByteArray) return QString::fromUtf8(value.toByteArray());
  return std::nullopt;
}

std::optional<int> integer(const QVariant& value) {
  bool ok = false;
  int result = 0;
  if (value.typeId() == QMetaType::Int || value.typeId() == QMetaType::LongLong) {
    const qlonglong wide = value.toLongLong(&ok);
    ok = ok && wide >= std::numeric_limits<int>::min() && wide <= std::numeric_limits<int>::max();
    result = static_cast<int>(wide);
  } else if (value.typeId() == QMetaType::QString) {
    result = value.toString().trimmed().toInt(&ok);
  }
  return ok ? std::optional<int>(result) : std::nullopt;
}

std::optional<double> real(const QVariant& value) {
  bool ok = false;
  double result = 0;
  if (value.typeId() == QMetaType::Double || value.typeId() == QMetaType::Int ||
      value.typeId() == QMetaType::LongLong) {
    result = value.toDouble(&ok);
  } else if (value.typeId() == QMetaType::QString) {
    result = QLocale::c().toDouble(value.toString().trimmed(), &ok);
  }
  if (!ok || !std::isfinite(result)) return std::nullopt;
  return result;
}

std::optional<bool> boolean(const QVariant& value) {
  if (value.typeId() == QMetaType::Bool) return value.toBool();
  if (value.typeId() != QMetaType::QString) return std::nullopt;
  const QString word = value.toString().trimmed().toLower();
  if (word == QLatin1String("true") || word == QLatin1String("1")) return true;
  if (word == QLatin1String("false") || word == QLatin1String("0")) return false;
  return std::nullopt;
}

std::optional<QStringList> text_list(const QVariant& value) {
  if (is_list(value)) return value.toStringList();
  // QSettings writes a one-element list as a plain string.
  if (value.typeId() == QMetaType::QString) {
    const QString one = value.toString();
    return one.isEmpty() ? QStringList{} : QStringList{one};
  }
  return std::nullopt;
}

std::optional<QByteArray> bytes(const QVariant& value) {
  if (value.typeId() == QMetaType::QByteArray) return value.toByteArray();
  if (value.typeId() == QMetaType::QString) return value.toString().toUtf8();
  return std::nullopt;
}

std::optional<QList<int>> integer_list(const QVariant& value) {
  const std::optional<QStringList> parts = pieces(value);
  if (!parts) return std::nullopt;
  QList<int> result;
  for (const QString& part : *parts) {
    const std::optional<int> number = integer(QVariant(part));
    if (!number) return std::nullopt;
    result.append(*number);
  }
  return result;
}

std::optional<QList<double>> real_list(const QVariant& value) {
  const std::optional<QStringList> parts = pieces(value);
  if (!parts) return std::nullopt;
  QList<double> result;
  for (const QString& part : *parts) {
    const std::optional<double> number = real(QVariant(part));
    if (!number) return std::nullopt;
    result.append(*number);
  }
  return result;
}

QString join(const QList<int>& values) {
  QStringList parts;
  for (int value : values)
    parts.append(QString::number(value));
  return parts.join(QLatin1Char(','));
}

QString join(const QList<double>& values) {
  QStringList parts;
  for (double value : values)
    parts.append(number(value));
  return parts.join(QLatin1Char(','));
}

QString number(double value) {
  return QString::number(value, 'g', QLocale::FloatingPointShortest);
}

QString describe(const QVariant& value) {
  if (is_list(value)) return value.toStringList().join(u", ");
  if (value.canConvert<QString>()) return value.toString();
  return QString::fromLatin1(value.typeName() != nullptr ? value.typeName() : "invalid");
}

}  // namespace quire::app::stored
