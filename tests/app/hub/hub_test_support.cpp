#include "hub_test_support.h"

#include <QFile>
#include <QRandomGenerator>
#include <QTest>

namespace hub_test {

QByteArray random_bytes(qsizetype size, quint32 seed) {
  QRandomGenerator generator(seed);
  QByteArray bytes(size, Qt::Uninitialized);
  for (char& byte : bytes)
    byte = static_cast<char>(generator.bounded(256));
  return bytes;
}

QString commit_of(const char* pair) {
  return QString::fromLatin1(pair).repeated(20);
}

quire::test::FakeRepo sample_repo(const QString& id) {
  quire::test::FakeRepo repo;
  repo.id = id;
  repo.tags = {QStringLiteral("safetensors"), QStringLiteral("exl2")};
  repo.downloads = 1200;
  repo.likes = 30;
  quire::test::FakeBranch main{QStringLiteral("main"), commit_of("a1"), {}};
  main.files = {{QStringLiteral("config.json"), R"({"architectures":["LlamaForCausalLM"]})", false},
                {QStringLiteral("model.safetensors"), random_bytes(300 * 1024, 1), true},
                {QStringLiteral("nested/tokenizer.model"), random_bytes(20 * 1024, 2), true},
                {QStringLiteral("README.md"), "# A model\n", false}};
  quire::test::FakeBranch quant{QStringLiteral("4.0bpw"), commit_of("b2"), {}};
  quant.files = {{QStringLiteral("config.json"), R"({"quantization_config":{"bits":4}})", false},
                 {QStringLiteral("output.safetensors"), random_bytes(64 * 1024, 3), true}};
  repo.branches = {main, quant};
  return repo;
}

quire::hub::HubSettings settings_for(const quire::test::FakeHub& hub, const QString& cache_dir,
                                     const QString& token) {
  quire::hub::HubSettings settings;
  settings.endpoint = hub.endpoint().toStdString();
  settings.cache_dir = cache_dir.toStdString();
  settings.hf_home = (cache_dir + QStringLiteral("/home")).toStdString();
  settings.token = token.toStdString();
  return settings;
}

quire::hub::RetryPolicy quick_retries() {
  quire::hub::RetryPolicy policy;
  policy.max_attempts = 5;
  policy.first_delay_ms = 50;
  policy.max_delay_ms = 400;
  return policy;
}

DownloadRun run_download(const quire::hub::HubSettings& settings,
                         const quire::hub::SnapshotRequest& request,
                         quire::hub::SnapshotOptions options) {
  quire::hub::HubClient client(settings);
  client.setRetryPolicy(quick_retries());
  if (options.transfer.stall_timeout_ms == quire::hub::TransferOptions{}.stall_timeout_ms)
    options.transfer.stall_timeout_ms = 2000;
  quire::hub::SnapshotDownload download(&client, quire::hub::HubCache(settings.cache_dir), request,
                                        options);
  DownloadRun run;
  bool over = false;
  QObject::connect(&download, &quire::hub::SnapshotDownload::note,
                   [&](const QString& text) { run.notes.append(text); });
  QObject::connect(&download, &quire::hub::SnapshotDownload::finished, [&](const QString& folder) {
    run.ok = true;
    run.folder = folder;
    over = true;
  });
  QObject::connect(&download, &quire::hub::SnapshotDownload::failed, [&](const QString& error) {
    run.error = error;
    over = true;
  });
  download.start();
  if (!QTest::qWaitFor([&] { return over; }, 30000)) run.error = QStringLiteral("(timed out)");
  return run;
}

QByteArray read_file(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return {};
  return file.readAll();
}

}  // namespace hub_test
