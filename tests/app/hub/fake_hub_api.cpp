// The fake Hub's JSON API: /api/models (search, with Link pages),
// /api/models/{repo}[/revision/{rev}] (siblings, with sizes and LFS hashes
// when ?blobs=true), /refs, /tree/{rev}[/{path}] (with Link pages) and
// POST /paths-info/{rev} (which @huggingface/hub's downloads ask), with the
// fields and error headers the Hub documents.

#include <QSet>
#include <QUrl>
#include <QUrlQuery>
#include <nlohmann/json.hpp>

#include "fake_hub.h"

namespace quire::test {
namespace {

using FakeJson = nlohmann::ordered_json;

std::string text(const QString& value) {
  return value.toStdString();
}

FakeJson summary_json(const FakeRepo& repo) {
  FakeJson tags = FakeJson::array();
  for (const QString& tag : repo.tags)
    tags.push_back(text(tag));
  FakeJson gated = repo.gated.isEmpty() ? FakeJson(false) : FakeJson(text(repo.gated));
  return FakeJson{{"_id", text(QString::fromLatin1(repo.id.toUtf8().toHex().left(24)))},
                  {"id", text(repo.id)},
                  {"modelId", text(repo.id)},
                  {"author", text(repo.id.section(QLatin1Char('/'), 0, 0))},
                  {"downloads", repo.downloads},
                  {"likes", repo.likes},
                  {"lastModified", text(repo.last_modified)},
                  {"private", false},
                  {"gated", gated},
                  {"tags", tags},
                  {"pipeline_tag", "text-generation"},
                  {"library_name", "transformers"}};
}

// The query of the next page: the same query with cursor=<offset>.
QByteArray next_link(const QString& endpoint, const QString& path,
                     const QMap<QString, QStringList>& query, int offset) {
  QUrlQuery next;
  for (auto item = query.cbegin(); item != query.cend(); ++item)
    if (item.key() != QLatin1String("cursor"))
      for (const QString& value : item.value())
        next.addQueryItem(item.key(), value);
  next.addQueryItem(QStringLiteral("cursor"), QString::number(offset));
  QUrl url(endpoint + path);
  url.setQuery(next);
  return "<" + url.toEncoded() + ">; rel=\"next\"";
}

}  // namespace

FakeHub::Answer FakeHub::answerApi(const QString& path, const QMap<QString, QStringList>& query,
                                   const QByteArray& body) {
  Answer answer;
  answer.headers = {{"Content-Type", "application/json; charset=utf-8"}};
  const auto json_answer = [&](const FakeJson& value) {
    answer.body = QByteArray::fromStdString(value.dump());
    return answer;
  };
  const auto error = [&](int status, const QByteArray& code, const QByteArray& message) {
    answer.status = status;
    answer.headers.append({"X-Error-Code", code});
    answer.headers.append({"X-Error-Message", message});
    answer.body = QByteArray::fromStdString(FakeJson{{"error", message.toStdString()}}.dump());
    return answer;
  };
  const int cursor = query.value(QStringLiteral("cursor")).value(0).toInt();

  if (path == QLatin1String("/api/models")) {
    const QString search = query.value(QStringLiteral("search")).value(0);
    const QString author = query.value(QStringLiteral("author")).value(0);
    const QStringList filters = query.value(QStringLiteral("filter"));
    QList<const FakeRepo*> found;
    for (const FakeRepo& repo : repos_) {
      if (!repo.id.contains(search, Qt::CaseInsensitive)) continue;
      if (!author.isEmpty() && repo.id.section(QLatin1Char('/'), 0, 0) != author) continue;
      bool tagged = true;
      for (const QString& filter : filters)
        tagged = tagged && repo.tags.contains(filter);
      if (tagged) found.append(&repo);
    }
    const QString sort = query.value(QStringLiteral("sort")).value(0);
    std::stable_sort(found.begin(), found.end(), [&](const FakeRepo* a, const FakeRepo* b) {
      if (sort == QLatin1String("likes")) return a->likes > b->likes;
      if (sort == QLatin1String("downloads")) return a->downloads > b->downloads;
      return false;
    });
    const int limit = query.contains(QStringLiteral("limit"))
                          ? query.value(QStringLiteral("limit")).value(0).toInt()
                          : 1000;
    const int page = std::min(limit, model_page_size_);
    FakeJson list = FakeJson::array();
    for (int i = cursor; i < found.size() && i < cursor + page; ++i)
      list.push_back(summary_json(*found[i]));
    if (cursor + page < found.size())
      answer.headers.append({"Link", next_link(endpoint(), path, query, cursor + page)});
    return json_answer(list);
  }

  // /api/models/{org}/{name}[/revision/{rev} | /refs | /tree/{rev}[/{path}]]
  const QStringList parts = path.mid(QStringLiteral("/api/models/").size()).split(QLatin1Char('/'));
  if (parts.size() < 2) return error(404, "EntryNotFound", "Not found");
  const FakeRepo* repo = findRepo(parts[0] + QLatin1Char('/') + parts[1]);
  if (repo == nullptr) return error(401, "RepoNotFound", "Repository not found");
  const QString kind = parts.value(2);

  if (kind == QLatin1String("refs")) {
    FakeJson branches = FakeJson::array();
    for (const FakeBranch& branch : repo->branches)
      branches.push_back({{"name", text(branch.name)},
                          {"ref", "refs/heads/" + text(branch.name)},
                          {"targetCommit", text(branch.commit)}});
    return json_answer(
        {{"branches", branches}, {"converts", FakeJson::array()}, {"tags", FakeJson::array()}});
  }

  if (kind.isEmpty() || kind == QLatin1String("revision")) {
    const FakeBranch* branch =
        findBranch(*repo, kind.isEmpty() ? QStringLiteral("main") : parts.mid(3).join('/'));
    if (branch == nullptr) return error(404, "RevisionNotFound", "Invalid rev id");
    const bool blobs = query.value(QStringLiteral("blobs")).value(0) == QLatin1String("true");
    FakeJson info = summary_json(*repo);
    info["sha"] = text(branch->commit);
    FakeJson siblings = FakeJson::array();
    for (const FakeFile& file : branch->files) {
      FakeJson sibling{{"rfilename", text(file.path)}};
      if (blobs) {
        const qint64 size = file.content.size() + faults_.size_lie;
        sibling["size"] = size;
        sibling["blobId"] = file.gitSha1().toStdString();
        if (file.lfs)
          sibling["lfs"] = {
              {"sha256", file.sha256().toStdString()}, {"size", size}, {"pointerSize", 134}};
      }
      siblings.push_back(sibling);
    }
    info["siblings"] = siblings;
    return json_answer(info);
  }

  if (kind == QLatin1String("paths-info")) {
    const FakeBranch* branch = findBranch(*repo, parts.mid(3).join(QLatin1Char('/')));
    if (branch == nullptr) return error(404, "RevisionNotFound", "Invalid rev id");
    const FakeJson request = FakeJson::parse(body.toStdString(), nullptr, false);
    FakeJson infos = FakeJson::array();
    if (request.is_object() && request.contains("paths") && request["paths"].is_array()) {
      for (const FakeJson& wanted : request["paths"]) {
        if (!wanted.is_string()) continue;
        for (const FakeFile& file : branch->files) {
          if (text(file.path) != wanted.get<std::string>()) continue;
          const qint64 size = file.content.size() + faults_.size_lie;
          FakeJson info{{"type", "file"},
                        {"path", text(file.path)},
                        {"oid", file.gitSha1().toStdString()},
                        {"size", size},
                        {"lastCommit",
                         {{"id", text(branch->commit)},
                          {"title", "Upload"},
                          {"date", text(repo->last_modified)}}},
                        {"securityFileStatus", {{"status", "safe"}}}};
          if (file.lfs)
            info["lfs"] = {
                {"oid", file.sha256().toStdString()}, {"size", size}, {"pointerSize", 134}};
          infos.push_back(info);
        }
      }
    }
    return json_answer(infos);
  }

  if (kind == QLatin1String("tree")) {
    const FakeBranch* branch = findBranch(*repo, parts.value(3));
    if (branch == nullptr) return error(404, "RevisionNotFound", "Invalid rev id");
    const QString folder = parts.mid(4).join(QLatin1Char('/'));
    const bool recursive =
        query.value(QStringLiteral("recursive")).value(0) == QLatin1String("true");
    const QString prefix = folder.isEmpty() ? QString() : folder + QLatin1Char('/');
    FakeJson entries = FakeJson::array();
    QSet<QString> folders;
    for (const FakeFile& file : branch->files) {
      if (!file.path.startsWith(prefix)) continue;
      const QString below = file.path.mid(prefix.size());
      const qsizetype slash = below.indexOf(QLatin1Char('/'));
      if (slash >= 0 && !recursive) {
        const QString directory = prefix + below.left(slash);
        if (!folders.contains(directory)) {
          folders.insert(directory);
          entries.push_back({{"type", "directory"},
                             {"oid", std::string(40, '0')},
                             {"size", 0},
                             {"path", text(directory)}});
        }
        continue;
      }
      const qint64 size = file.content.size() + faults_.size_lie;
      FakeJson entry{{"type", "file"},
                     {"oid", file.gitSha1().toStdString()},
                     {"size", size},
                     {"path", text(file.path)}};
      if (file.lfs)
        entry["lfs"] = {{"oid", file.sha256().toStdString()}, {"size", size}, {"pointerSize", 134}};
      entries.push_back(entry);
    }
    FakeJson page = FakeJson::array();
    for (int i = cursor; i < static_cast<int>(entries.size()) && i < cursor + tree_page_size_; ++i)
      page.push_back(entries[static_cast<std::size_t>(i)]);
    if (cursor + tree_page_size_ < static_cast<int>(entries.size()))
      answer.headers.append({"Link", next_link(endpoint(), path, query, cursor + tree_page_size_)});
    return json_answer(page);
  }
  return error(404, "EntryNotFound", "Not found");
}

}  // namespace quire::test
