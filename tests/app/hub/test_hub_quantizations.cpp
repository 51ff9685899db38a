// A repository's quantizations (a branch per bits-per-weight, a folder per
// quantization, one model in the root), surveyed across branches on the
// fake Hub, and the header probe that prices one before it is downloaded:
// ranged reads of each safetensors header into a sparse file of the right
// size, through redirects, servers that ignore Range and headers that lie.

#include <sys/stat.h>

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QtEndian>

#include "fake_hub.h"
#include "hub_test_support.h"
#include "quire/hub/described_ranges.h"
#include "quire/hub/hub_error.h"
#include "quire/hub/model_header_probe.h"
#include "quire/hub/quantization_survey.h"
#include "quire/hub/repo_quantizations.h"
#include "test_main.h"

using quire::hub::Quantization;
using quire::test::FakeBranch;
using quire::test::FakeFile;
using quire::test::FakeHub;
using quire::test::FakeRepo;

namespace {

quire::hub::RepoFile repo_file(const std::string& path, std::int64_t size) {
  quire::hub::RepoFile file;
  file.path = path;
  file.size = size;
  file.blob_id = std::string(40, 'a');
  return file;
}

// A safetensors file with one F16 tensor of `elements` values, then an I16
// table of 64 values (as EXL2's q_groups, which the engine reads before
// loading); `padding` metadata bytes make its header as long as a test needs.
QByteArray safetensors(qint64 elements, qsizetype padding = 0) {
  QJsonObject tensor;
  tensor.insert(QStringLiteral("dtype"), QStringLiteral("F16"));
  tensor.insert(QStringLiteral("shape"), QJsonArray{elements});
  tensor.insert(QStringLiteral("data_offsets"), QJsonArray{0, elements * 2});
  QJsonObject table;
  table.insert(QStringLiteral("dtype"), QStringLiteral("I16"));
  table.insert(QStringLiteral("shape"), QJsonArray{64});
  table.insert(QStringLiteral("data_offsets"), QJsonArray{elements * 2, elements * 2 + 128});
  QJsonObject header;
  header.insert(QStringLiteral("weight"), tensor);
  header.insert(QStringLiteral("weight.q_groups"), table);
  if (padding > 0) {
    QJsonObject metadata;
    metadata.insert(QStringLiteral("padding"), QString(padding, QLatin1Char('x')));
    header.insert(QStringLiteral("__metadata__"), metadata);
  }
  const QByteArray json = QJsonDocument(header).toJson(QJsonDocument::Compact);
  QByteArray bytes(8, '\0');
  qToLittleEndian<quint64>(static_cast<quint64>(json.size()), bytes.data());
  return bytes + json + hub_test::random_bytes(elements * 2 + 128, 11);
}

FakeBranch branch(const QString& name, const char* commit_pair, QList<FakeFile> files) {
  return FakeBranch{name, hub_test::commit_of(commit_pair), std::move(files)};
}

// turboderp's shape: main holds a README, each bits-per-weight its branch.
FakeRepo branch_per_size_repo() {
  FakeRepo repo;
  repo.id = QStringLiteral("turbo/Model-exl2");
  repo.tags = {QStringLiteral("exl2")};
  repo.branches = {
      branch(QStringLiteral("main"), "a1", {{QStringLiteral("README.md"), "# Model", false}}),
      branch(QStringLiteral("8.0bpw"), "b8",
             {{QStringLiteral("config.json"), R"({"bits":8})", false},
              {QStringLiteral("output.safetensors"), safetensors(4000), true}}),
      branch(QStringLiteral("2.5bpw"), "b2",
             {{QStringLiteral("config.json"), R"({"bits":2.5})", false},
              {QStringLiteral("output.safetensors"), safetensors(1000), true}}),
      branch(QStringLiteral("4.0bpw"), "b4",
             {{QStringLiteral("config.json"), R"({"bits":4})", false},
              {QStringLiteral("output.safetensors"), safetensors(2000), true}})};
  return repo;
}

qint64 allocated_bytes(const QString& path) {
  struct stat info {};
  if (::stat(QFile::encodeName(path).constData(), &info) != 0) return -1;
  return static_cast<qint64>(info.st_blocks) * 512;
}

// Whether this file system leaves holes where a file is extended.
bool makes_holes(const QString& folder) {
  QFile file(QDir(folder).filePath(QStringLiteral("hole-check")));
  if (!file.open(QIODevice::WriteOnly) || !file.resize(8 * 1024 * 1024)) return false;
  file.close();
  const bool holes = allocated_bytes(file.fileName()) < 1024 * 1024;
  file.remove();
  return holes;
}

}  // namespace

class HubQuantizationsTest : public QObject {
  Q_OBJECT

 private slots:
  void aFolderWithConfigIsAQuantizationAndOwnsItsFiles() {
    quire::hub::ModelInfo info;
    info.sha = std::string(40, 'c');
    info.files = {repo_file("README.md", 10),
                  repo_file("config.json", 100),
                  repo_file("model.safetensors", 1000),
                  repo_file("exl3/4.0bpw/config.json", 50),
                  repo_file("exl3/4.0bpw/model.safetensors", 400),
                  repo_file("images/chart.png", 7),
                  repo_file("a/b/c/config.json", 5)};
    const std::vector<Quantization> found = quire::hub::quantizations_in("main", info);
    QCOMPARE(found.size(), std::size_t(2));
    QCOMPARE(found[0].subfolder, std::string());
    QCOMPARE(found[0].label(), std::string("main"));
    // The root owns its own files and the folders that are no quantization,
    // but not the nested quantization's; a config.json three levels down is
    // deeper than quantizations are looked for.
    QCOMPARE(found[0].bytes, std::int64_t(10 + 100 + 1000 + 7 + 5));
    QCOMPARE(found[1].subfolder, std::string("exl3/4.0bpw"));
    QCOMPARE(found[1].label(), std::string("main: exl3/4.0bpw"));
    QCOMPARE(found[1].key(), std::string("main/exl3/4.0bpw"));
    QCOMPARE(found[1].bytes, std::int64_t(450));
    QCOMPARE(found[1].commit, info.sha);
    const quire::hub::FileFilter filter = found[1].filter();
    QVERIFY(filter.accepts("exl3/4.0bpw/model.safetensors"));
    QVERIFY(!filter.accepts("model.safetensors"));
    QVERIFY(!filter.accepts("exl3/4.0bpw/other.safetensors"));
  }

  void aBranchWithoutConfigHoldsNone() {
    quire::hub::ModelInfo info;
    info.files = {repo_file("README.md", 10), repo_file("model-Q4_K_M.gguf", 100)};
    QVERIFY(quire::hub::quantizations_in("main", info).empty());
  }

  void exactGlobsMatchOnlyTheirPath() {
    quire::hub::FileFilter filter;
    filter.include = {quire::hub::exact_glob("weights[1]*.safetensors")};
    QVERIFY(filter.accepts("weights[1]*.safetensors"));
    QVERIFY(!filter.accepts("weights1x.safetensors"));
    QVERIFY(!filter.accepts("weights[1]-2.safetensors"));
  }

  void branchesReadInTheOrderPeopleDo() {
    std::vector<std::string> names{"8.0bpw",  "10.0bpw", "main",       "2.5bpw",
                                   "4.65bpw", "3.0bpw",  "measurement"};
    std::sort(names.begin(), names.end(), quire::hub::revision_before);
    QCOMPARE(names, (std::vector<std::string>{"main", "2.5bpw", "3.0bpw", "4.65bpw", "8.0bpw",
                                              "10.0bpw", "measurement"}));
  }

  void theProbeReadsTheTablesTheEnginesChecksLookInto() {
    // EXL2's q_groups and q_invperm (integers, small), a GPTQ g_idx far from
    // them, a K scale (float, read for the cache), and weights left alone.
    const std::string header = R"({
      "__metadata__": {"format": "pt"},
      "a.q_weight": {"dtype": "I32", "shape": [1048576], "data_offsets": [0, 4194304]},
      "a.q_invperm": {"dtype": "I32", "shape": [256], "data_offsets": [4194304, 4195328]},
      "a.q_groups": {"dtype": "I16", "shape": [16], "data_offsets": [4195328, 4195360]},
      "a.weight": {"dtype": "F16", "shape": [64], "data_offsets": [4195360, 4195488]},
      "b.g_idx": {"dtype": "I32", "shape": [64], "data_offsets": [8000000, 8000256]},
      "c.k_scale": {"dtype": "F32", "shape": [], "data_offsets": [8000256, 8000260]},
      "c.norm": {"dtype": "BF16", "shape": [2], "data_offsets": [8000260, 8000264]}
    })";
    const auto ranges = quire::hub::described_data_ranges(header, 100);
    QCOMPARE(ranges.size(), std::size_t(2));
    // q_invperm and q_groups are neighbours, fetched as one; q_weight is too
    // big to be a table.
    QCOMPARE(ranges[0], (quire::hub::ByteRange{100 + 4194304, 100 + 4195360 - 1}));
    QCOMPARE(ranges[1], (quire::hub::ByteRange{100 + 8000000, 100 + 8000260 - 1}));
    QVERIFY_THROWS_EXCEPTION(quire::hub::HubProtocolError,
                             quire::hub::described_data_ranges(R"({"x": {"dtype": "I32"}})", 8));
    QVERIFY_THROWS_EXCEPTION(quire::hub::HubProtocolError,
                             quire::hub::described_data_ranges("[1, 2]", 8));
  }

  void aSurveyFindsEachBranchsQuantization() {
    FakeHub hub;
    QVERIFY(hub.start());
    hub.addRepo(branch_per_size_repo());
    QTemporaryDir cache;
    quire::hub::HubClient client(hub_test::settings_for(hub, cache.path()));
    client.setRetryPolicy(hub_test::quick_retries());
    quire::hub::QuantizationSurvey survey(&client, QStringLiteral("turbo/Model-exl2"));
    QSignalSpy finished(&survey, &quire::hub::QuantizationSurvey::finished);
    QSignalSpy failed(&survey, &quire::hub::QuantizationSurvey::failed);
    survey.start();
    QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty() || !failed.isEmpty(), 10'000);
    QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed[0][0].toString()));
    const auto found = finished[0][0].value<std::vector<Quantization>>();
    QCOMPARE(found.size(), std::size_t(3));
    QCOMPARE(found[0].revision, std::string("2.5bpw"));
    QCOMPARE(found[1].revision, std::string("4.0bpw"));
    QCOMPARE(found[2].revision, std::string("8.0bpw"));
    QCOMPARE(found[1].commit, hub_test::commit_of("b4").toStdString());
    // {"bits":4} and the weights.
    QCOMPARE(found[1].bytes, qint64(10 + safetensors(2000).size()));
    QCOMPARE(finished[0][1].toString(), QString());
  }

  void aGgufRepositoryIsNamedAsSuch() {
    FakeHub hub;
    QVERIFY(hub.start());
    FakeRepo repo;
    repo.id = QStringLiteral("someone/Model-GGUF");
    repo.branches = {branch(QStringLiteral("main"), "e1",
                            {{QStringLiteral("model-Q4_K_M.gguf"), "GGUF", true},
                             {QStringLiteral("README.md"), "# gguf", false}})};
    hub.addRepo(repo);
    QTemporaryDir cache;
    quire::hub::HubClient client(hub_test::settings_for(hub, cache.path()));
    quire::hub::QuantizationSurvey survey(&client, repo.id);
    QSignalSpy finished(&survey, &quire::hub::QuantizationSurvey::finished);
    survey.start();
    QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 10'000);
    QVERIFY(finished[0][0].value<std::vector<Quantization>>().empty());
    QVERIFY2(finished[0][1].toString().contains(QStringLiteral("GGUF files, which Quire does not")),
             qPrintable(finished[0][1].toString()));
  }

  void aMissingRepositoryFailsTheSurvey() {
    FakeHub hub;
    QVERIFY(hub.start());
    QTemporaryDir cache;
    quire::hub::HubClient client(hub_test::settings_for(hub, cache.path()));
    client.setRetryPolicy(hub_test::quick_retries());
    quire::hub::QuantizationSurvey survey(&client, QStringLiteral("nobody/nothing"));
    QSignalSpy failed(&survey, &quire::hub::QuantizationSurvey::failed);
    survey.start();
    QTRY_VERIFY_WITH_TIMEOUT(!failed.isEmpty(), 10'000);
    QVERIFY2(failed[0][0].toString().contains(QStringLiteral("nobody/nothing was not found")),
             qPrintable(failed[0][0].toString()));
  }

  void theProbeWritesHeadersIntoSparseFilesOfTheRightSize_data() {
    QTest::addColumn<qsizetype>("padding");
    QTest::addColumn<bool>("ignoreRange");
    QTest::newRow("small header") << qsizetype(0) << false;
    // Longer than the first read: a second ranged request fetches the rest.
    QTest::newRow("long header") << qsizetype(400'000) << false;
    // The whole file comes; the probe stops reading once it has the header.
    QTest::newRow("Range ignored") << qsizetype(0) << true;
  }

  void theProbeWritesHeadersIntoSparseFilesOfTheRightSize() {
    QFETCH(qsizetype, padding);
    QFETCH(bool, ignoreRange);
    const QByteArray weights = safetensors(2'000'000, padding);  // 4 MB of data
    const QByteArray config = R"({"model_type":"llama","hidden_size":64})";
    FakeRepo repo;
    repo.id = QStringLiteral("org/probed");
    repo.branches = {branch(QStringLiteral("main"), "f1",
                            {{QStringLiteral("q/config.json"), config, false},
                             {QStringLiteral("q/model.safetensors"), weights, true},
                             {QStringLiteral("q/tokenizer.json"), "{}", false},
                             {QStringLiteral("q/extra/notes.safetensors"), weights, true}})};
    FakeHub hub;
    QVERIFY(hub.start());
    hub.addRepo(repo);
    hub.faults().ignore_range = ignoreRange;
    QTemporaryDir cache;
    QTemporaryDir probe_root;
    quire::hub::HubClient client(hub_test::settings_for(hub, cache.path(), QStringLiteral("hf_t")));
    client.setRetryPolicy(hub_test::quick_retries());

    Quantization quantization;
    quantization.revision = "main";
    quantization.commit = hub_test::commit_of("f1").toStdString();
    quantization.subfolder = "q";
    for (const FakeFile& file : repo.branches[0].files) {
      quire::hub::RepoFile entry = repo_file(file.path.toStdString(), file.content.size());
      quantization.files.push_back(entry);
    }
    const QString folder = probe_root.filePath(QStringLiteral("probe"));
    quire::hub::ModelHeaderProbe probe(&client, repo.id, quantization, folder);
    QSignalSpy finished(&probe, &quire::hub::ModelHeaderProbe::finished);
    QSignalSpy failed(&probe, &quire::hub::ModelHeaderProbe::failed);
    probe.start();
    QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty() || !failed.isEmpty(), 20'000);
    QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed[0][0].toString()));

    // Only the model's own folder, and only what planning reads.
    QCOMPARE(QDir(folder).entryList(QDir::Files | QDir::NoDotAndDotDot),
             (QStringList{QStringLiteral("config.json"), QStringLiteral("model.safetensors")}));
    QCOMPARE(hub_test::read_file(QDir(folder).filePath(QStringLiteral("config.json"))), config);
    const QString probed = QDir(folder).filePath(QStringLiteral("model.safetensors"));
    QCOMPARE(QFileInfo(probed).size(), qint64(weights.size()));
    const quint64 header_length = qFromLittleEndian<quint64>(weights.constData());
    const QByteArray read = hub_test::read_file(probed);
    const qsizetype header_end = 8 + static_cast<qsizetype>(header_length);
    QCOMPARE(read.left(header_end), weights.left(header_end));
    // Past the header: nothing of the weights was downloaded, and the table
    // the engine reads was.
    QCOMPARE(read.mid(header_end, weights.size() - header_end - 128),
             QByteArray(weights.size() - header_end - 128, '\0'));
    QCOMPARE(read.right(128), weights.right(128));
    if (makes_holes(probe_root.path()))
      QVERIFY2(allocated_bytes(probed) < header_end + 256 * 1024,
               qPrintable(QString::number(allocated_bytes(probed))));
    // The file host never saw the token.
    QCOMPARE(hub.fileHostRequestsWithAuthorization(), 0);
  }

  void aHeaderLongerThanItsFileIsRefused() {
    QByteArray lying = safetensors(100);
    qToLittleEndian<quint64>(quint64(1) << 40, lying.data());
    FakeRepo repo;
    repo.id = QStringLiteral("org/liar");
    repo.branches = {branch(QStringLiteral("main"), "f2",
                            {{QStringLiteral("config.json"), "{}", false},
                             {QStringLiteral("model.safetensors"), lying, true}})};
    FakeHub hub;
    QVERIFY(hub.start());
    hub.addRepo(repo);
    QTemporaryDir cache;
    quire::hub::HubClient client(hub_test::settings_for(hub, cache.path()));
    Quantization quantization;
    quantization.revision = "main";
    quantization.commit = hub_test::commit_of("f2").toStdString();
    quantization.files = {repo_file("config.json", 2),
                          repo_file("model.safetensors", lying.size())};
    quire::hub::ModelHeaderProbe probe(&client, repo.id, quantization,
                                       cache.filePath(QStringLiteral("probe")));
    QSignalSpy failed(&probe, &quire::hub::ModelHeaderProbe::failed);
    probe.start();
    QTRY_VERIFY_WITH_TIMEOUT(!failed.isEmpty(), 10'000);
    QVERIFY2(failed[0][0].toString().contains(QStringLiteral("it is not a safetensors file")),
             qPrintable(failed[0][0].toString()));
  }
};

QUIRE_TEST(HubQuantizationsTest)
#include "test_hub_quantizations.moc"
