#pragma once

// Reading values back from QSettings strictly. An INI file holds text, and a
// hand-edited one holds anything: "12abc" is not 12, "yes please" is not true,
// and `a, b` arrives as a list. Each reader returns nothing for a value it
// cannot take whole.

#include <QList>
#include <QString>
#include <QStringList>
#include <QVariant>
#include <optional>

namespace quire::app::stored {

std::optional<QString> text(const QVariant& value);
std::optional<int> integer(const QVariant& value);
std::optional<double> real(const QVariant& value);  // finite only
std::optional<bool> boolean(const QVariant& value);
std::optional<QStringList> text_list(const QVariant& value);
std::optional<QByteArray> bytes(const QVariant& value);

// Lists of numbers are stored as one comma-separated string ("0,2"); a list
// QSettings split at the commas of a hand-edited file is read too.
std::optional<QList<int>> integer_list(const QVariant& value);
std::optional<QList<double>> real_list(const QVariant& value);
QString join(const QList<int>& values);
QString join(const QList<double>& values);

QString number(double value);  // shortest text that reads back as the same double

// The value as a person would recognise it in the file, for problem reports.
QString describe(const QVariant& value);

}  // namespace quire::app::stored
