// Search in titles and message text. With FTS5 the trigram index answers
// substrings of three or more characters, folding case across Unicode; shorter
// queries, and SQLite builds without FTS5, use LIKE (which folds ASCII only).

#include <QHash>

#include "chat_store_impl.h"

namespace quire::store {
namespace {

constexpr int kSnippetContext = 40;

// An FTS5 string literal: the whole query as one phrase, so that its
// characters are never read as query syntax.
QString fts_phrase(const QString& text) {
  QString quoted = text;
  quoted.replace(QLatin1Char('"'), QStringLiteral("\"\""));
  return QLatin1Char('"') + quoted + QLatin1Char('"');
}

// A LIKE pattern that matches `text` literally anywhere ('\' escapes).
QString like_pattern(const QString& text) {
  QString escaped;
  for (QChar c : text) {
    if (c == QLatin1Char('\\') || c == QLatin1Char('%') || c == QLatin1Char('_')) {
      escaped += QLatin1Char('\\');
    }
    escaped += c;
  }
  return QLatin1Char('%') + escaped + QLatin1Char('%');
}

// About kSnippetContext characters either side of the first match, on one line.
QString snippet(const QString& text, const QString& query) {
  const qsizetype at = text.indexOf(query, 0, Qt::CaseInsensitive);
  const qsizetype from = at < 0 ? 0 : std::max<qsizetype>(0, at - kSnippetContext);
  const qsizetype length = (at < 0 ? 0 : at - from) + query.size() + kSnippetContext;
  QString cut = text.mid(from, length).simplified();
  if (from > 0) cut.prepend(QStringLiteral("…"));
  if (from + length < text.size()) cut.append(QStringLiteral("…"));
  return cut;
}

}  // namespace

QList<SearchHit> ChatStore::search(const QString& text, int limit) const {
  QList<SearchHit> hits;
  if (!d_->require_open()) return hits;
  const QString query = text.trimmed();
  if (query.isEmpty() || limit <= 0) {
    d_->succeed();
    return hits;
  }
  // The trigram index cannot answer fewer than three characters.
  const bool fts = d_->fts && query.size() >= 3;
  const QString needle = fts ? fts_phrase(query) : like_pattern(query);

  // The earliest matching message of each chat gives the hit's snippet.
  struct FirstMatch {
    MessageId id{};
    QString text;
  };
  QHash<qint64, FirstMatch> first_match;
  {
    detail::Run run(
        d_->sql(),
        // SQLite takes the bare columns of an aggregate from the row holding the MIN().
        fts ? QStringLiteral("SELECT m.chat_id, m.id, m.text, MIN(m.position) FROM message_search s"
                             " JOIN messages m ON m.id = s.rowid"
                             " WHERE message_search MATCH ? GROUP BY m.chat_id")
            : QStringLiteral("SELECT m.chat_id, m.id, m.text, MIN(m.position) FROM messages m"
                             " WHERE m.text LIKE ? ESCAPE '\\' GROUP BY m.chat_id"));
    run << needle;
    if (!run.exec()) {
      d_->fail_sql(QStringLiteral("search messages"), run.error());
      return hits;
    }
    while (run.next()) {
      first_match.insert(run.value(0).toLongLong(),
                         {MessageId{run.value(1).toLongLong()}, run.value(2).toString()});
    }
  }

  // Live chats whose title or messages match, most recent activity first.
  detail::Run run(
      d_->sql(),
      QStringLiteral("SELECT %1, c.id IN (%2) FROM chats c WHERE c.deleted_at IS NULL"
                     " AND (c.id IN (%2) OR c.id IN (SELECT m.chat_id FROM %3))"
                     " ORDER BY c.updated DESC, c.id DESC LIMIT ?")
          .arg(detail::kSummaryColumns,
               fts ? QStringLiteral("SELECT rowid FROM chat_search WHERE chat_search MATCH ?")
                   : QStringLiteral("SELECT id FROM chats WHERE title LIKE ? ESCAPE '\\'"),
               fts ? QStringLiteral("message_search s JOIN messages m ON m.id = s.rowid"
                                    " WHERE message_search MATCH ?")
                   : QStringLiteral("messages m WHERE m.text LIKE ? ESCAPE '\\'")));
  // The needle appears three times: the title test, the title filter, the messages.
  run << needle << needle << needle << limit;
  if (!run.exec()) {
    d_->fail_sql(QStringLiteral("search chats"), run.error());
    return hits;
  }
  while (run.next()) {
    SearchHit hit;
    hit.chat = detail::read_summary(run);
    hit.title_matches = run.value(8).toBool();
    const auto match = first_match.constFind(raw(hit.chat.id));
    if (match != first_match.constEnd()) {
      hit.message = match->id;
      hit.snippet = snippet(match->text, query);
    }
    hits << hit;
  }
  d_->succeed();
  return hits;
}

}  // namespace quire::store
