// HubClient's API calls against the fake Hub: search across Link pages,
// repository info with sizes and hashes, branches, trees, a renamed
// repository, 429 with Retry-After, and the messages for failures.

#include <QDir>
#include <QElapsedTimer>
#include <QTest>

#include "fake_hub.h"
#include "hub_test_support.h"
#include "test_main.h"

using namespace quire::hub;
using quire::test::FakeHub;

namespace {

template <typename T>
struct Got {
  std::optional<T> value;
  QString error;
};

// Runs one call and waits for its answer.
template <typename T, typename Call>
Got<T> wait_for(Call call) {
  Got<T> got;
  bool over = false;
  call([&](std::optional<T> value, const QString& error) {
    got.value = std::move(value);
    got.error = error;
    over = true;
  });
  if (!QTest::qWaitFor([&] { return over; }, 20000)) got.error = QStringLiteral("(timed out)");
  return got;
}

}  // namespace

class HubClientTest : public QObject {
  Q_OBJECT

 private slots:
  void searchFollowsLinkPagesUpToTheLimit() {
    FakeHub hub;
    QVERIFY(hub.start());
    for (int i = 0; i < 7; ++i) {
      quire::test::FakeRepo repo =
          hub_test::sample_repo(QStringLiteral("org/llama-%1-exl2").arg(i));
      repo.likes = i;
      hub.addRepo(repo);
    }
    hub.addRepo(hub_test::sample_repo(QStringLiteral("org/other")));
    hub.setModelPageSize(2);
    HubClient client(hub_test::settings_for(hub, QDir::tempPath()));
    SearchQuery query;
    query.search = QStringLiteral("llama");
    query.sort = QStringLiteral("likes");
    query.filters = {QStringLiteral("exl2")};
    query.limit = 5;
    const auto got =
        wait_for<std::vector<ModelSummary>>([&](auto answer) { client.search(query, answer); });
    QVERIFY2(got.value, qPrintable(got.error));
    QCOMPARE(got.value->size(), 5u);
    QCOMPARE(got.value->front().id, std::string("org/llama-6-exl2"));  // most liked first
    QCOMPARE(got.value->back().id, std::string("org/llama-2-exl2"));
    QCOMPARE(got.value->front().downloads, 1200);
    // Three pages of two; the first asks for the filter and the sort.
    int searches = 0;
    for (const auto& request : hub.requests()) {
      if (!request.target.startsWith("/api/models?")) continue;
      ++searches;
      QVERIFY(request.target.contains("search=llama"));
      QVERIFY(request.target.contains("filter=exl2"));
      QVERIFY(request.target.contains("sort=likes"));
    }
    QCOMPARE(searches, 3);
  }

  void readsInfoRefsAndTrees() {
    FakeHub hub;
    QVERIFY(hub.start());
    const quire::test::FakeRepo repo = hub_test::sample_repo();
    hub.addRepo(repo);
    hub.setTreePageSize(2);
    HubClient client(hub_test::settings_for(hub, QDir::tempPath()));

    const auto info = wait_for<ModelInfo>(
        [&](auto answer) { client.modelInfo(QStringLiteral("org/model"), QString(), answer); });
    QVERIFY2(info.value, qPrintable(info.error));
    QCOMPARE(QString::fromStdString(info.value->sha), hub_test::commit_of("a1"));
    QCOMPARE(info.value->files.size(), 4u);
    const RepoFile& weights = info.value->files[1];
    QCOMPARE(weights.path, std::string("model.safetensors"));
    QCOMPARE(weights.size, 300 * 1024);
    QCOMPARE(QByteArray::fromStdString(weights.etag()), repo.branches[0].files[1].sha256());
    QVERIFY(hub.requests().last().target.contains("/revision/HEAD?blobs=true"));

    const auto quant = wait_for<ModelInfo>([&](auto answer) {
      client.modelInfo(QStringLiteral("org/model"), QStringLiteral("4.0bpw"), answer);
    });
    QVERIFY2(quant.value, qPrintable(quant.error));
    QCOMPARE(QString::fromStdString(quant.value->sha), hub_test::commit_of("b2"));

    const auto refs =
        wait_for<RepoRefs>([&](auto answer) { client.refs(QStringLiteral("org/model"), answer); });
    QVERIFY2(refs.value, qPrintable(refs.error));
    QCOMPARE(refs.value->branches.size(), 2u);
    QCOMPARE(refs.value->branches[1].name, std::string("4.0bpw"));

    const auto tree = wait_for<std::vector<TreeEntry>>([&](auto answer) {
      client.tree(QStringLiteral("org/model"), QStringLiteral("main"), QString(), true, answer);
    });
    QVERIFY2(tree.value, qPrintable(tree.error));
    QCOMPARE(tree.value->size(), 4u);  // two pages of two
    QCOMPARE(tree.value->at(2).path, std::string("nested/tokenizer.model"));
    QVERIFY(tree.value->at(2).lfs);

    const auto top = wait_for<std::vector<TreeEntry>>([&](auto answer) {
      client.tree(QStringLiteral("org/model"), QStringLiteral("main"), QString(), false, answer);
    });
    QVERIFY2(top.value, qPrintable(top.error));
    QCOMPARE(top.value->size(), 4u);
    QVERIFY(top.value->at(2).is_directory);
    QCOMPARE(top.value->at(2).path, std::string("nested"));
  }

  void followsARenamedRepository() {
    FakeHub hub;
    QVERIFY(hub.start());
    hub.addRepo(hub_test::sample_repo(QStringLiteral("neworg/model")));
    hub.addRename(QStringLiteral("oldorg/model"), QStringLiteral("neworg/model"));
    HubClient client(hub_test::settings_for(hub, QDir::tempPath()));
    const auto info = wait_for<ModelInfo>(
        [&](auto answer) { client.modelInfo(QStringLiteral("oldorg/model"), QString(), answer); });
    QVERIFY2(info.value, qPrintable(info.error));
    QCOMPARE(info.value->summary.id, std::string("neworg/model"));
  }

  void waitsAsRetryAfterSays() {
    FakeHub hub;
    QVERIFY(hub.start());
    hub.addRepo(hub_test::sample_repo());
    hub.faults().rate_limits = 1;
    hub.faults().retry_after_s = 1;
    HubClient client(hub_test::settings_for(hub, QDir::tempPath()));
    client.setRetryPolicy(hub_test::quick_retries());
    QElapsedTimer timer;
    timer.start();
    const auto refs =
        wait_for<RepoRefs>([&](auto answer) { client.refs(QStringLiteral("org/model"), answer); });
    QVERIFY2(refs.value, qPrintable(refs.error));
    QVERIFY2(timer.elapsed() >= 950, qPrintable(QString::number(timer.elapsed())));
    QCOMPARE(hub.requests().size(), 2);

    // A Retry-After beyond what the policy accepts fails at once, saying why.
    hub.faults().rate_limits = 1;
    hub.faults().retry_after_s = 3600;
    const auto refused =
        wait_for<RepoRefs>([&](auto answer) { client.refs(QStringLiteral("org/model"), answer); });
    QVERIFY(!refused.value);
    QVERIFY2(refused.error.contains(QLatin1String("HTTP 429")), qPrintable(refused.error));
  }

  void explainsFailures() {
    FakeHub hub;
    QVERIFY(hub.start());
    hub.addRepo(hub_test::sample_repo());
    HubClient client(hub_test::settings_for(hub, QDir::tempPath()));
    const auto missing = wait_for<ModelInfo>(
        [&](auto answer) { client.modelInfo(QStringLiteral("org/absent"), QString(), answer); });
    QVERIFY(!missing.value);
    QCOMPARE(missing.error,
             QStringLiteral("org/absent was not found on %1 (HTTP 401: Repository not found). "
                            "Check the name; a private repository needs a token (HF_TOKEN or "
                            "the token file).")
                 .arg(hub.endpoint()));
    const auto branch = wait_for<ModelInfo>([&](auto answer) {
      client.modelInfo(QStringLiteral("org/model"), QStringLiteral("9.0bpw"), answer);
    });
    QVERIFY(!branch.value);
    QVERIFY2(branch.error.startsWith(QLatin1String("org/model has no such branch, tag or commit")),
             qPrintable(branch.error));

    HubClient nowhere([] {
      HubSettings settings;
      settings.endpoint = "http://127.0.0.1:1";
      return settings;
    }());
    nowhere.setRetryPolicy({1, 10, 10, 10});
    const auto unreachable =
        wait_for<RepoRefs>([&](auto answer) { nowhere.refs(QStringLiteral("org/model"), answer); });
    QVERIFY(!unreachable.value);
    QVERIFY2(unreachable.error.startsWith(
                 QLatin1String("Could not reach http://127.0.0.1:1 for the branch list")),
             qPrintable(unreachable.error));
  }
};

QUIRE_TEST(HubClientTest)
#include "test_hub_client.moc"
