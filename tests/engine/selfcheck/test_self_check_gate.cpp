// check_backend_once(): a fake backend that computes wrong results fails and
// its problem names the log, which holds the details; a faithful one passes;
// the outcome is remembered for its key and reused, and checked again when
// the driver, Quire or the library changes; a damaged record file is ignored
// and written anew; a check that could not be completed is not remembered.

#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "perturbed_backend.h"
#include "quire/engine/selfcheck/self_check_gate.h"
#include "test_main.h"

using namespace quire;
using namespace quire::engine::selfcheck;
using quire::test::PerturbedBackend;

namespace {

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

GateOptions version(const std::string& quire_version) {
  GateOptions options;
  options.quire_version = quire_version;
  return options;
}

}  // namespace

class SelfCheckGateTest : public QObject {
  Q_OBJECT

  QTemporaryDir folder_;
  std::unique_ptr<SelfCheckStore> store_;
  kernels::CpuBackend inner_;

 private slots:
  void init() {
    const std::filesystem::path folder = std::filesystem::path(folder_.path().toStdString());
    std::filesystem::remove_all(folder / "cache");
    store_ = std::make_unique<SelfCheckStore>(folder / "cache" / "Quire", "fake");
  }

  void aWrongBackendFailsAndTheLineNamesTheLog() {
    PerturbedBackend candidate(inner_);
    candidate.faults.linear_scale = 1.1f;
    const GateOutcome outcome = check_backend_once(candidate, *store_, version("1.0"));
    QVERIFY(!outcome.passed);
    QVERIFY(outcome.ran_now);
    QVERIFY2(outcome.store_error.empty(), outcome.store_error.c_str());
    QVERIFY2(outcome.problem.starts_with(
                 "the fake backend failed its self-check against the CPU: device 0 (Fake GPU 0, "
                 "sm_86): logits differ from the CPU's by "),
             outcome.problem.c_str());
    QVERIFY2(outcome.problem.ends_with("; details in " + store_->log_file().string()),
             outcome.problem.c_str());
    QVERIFY(!contains(outcome.problem, "\n"));
    const std::string log = read(store_->log_file());
    QVERIFY2(contains(log, "result: failed: " + outcome.record.summary), log.c_str());
    QVERIFY2(contains(log, "backend version: fake runtime 1.0, driver 1.0"), log.c_str());

    // Remembered: the next start uses the CPU without computing anything.
    const int calls = candidate.linear_calls;
    const GateOutcome again = check_backend_once(candidate, *store_, version("1.0"));
    QVERIFY(!again.passed);
    QVERIFY(!again.ran_now);
    QCOMPARE(candidate.linear_calls, calls);
    QVERIFY2(
        again.problem.starts_with("the fake backend failed its self-check against the CPU on " +
                                  outcome.record.checked_at + ": device 0"),
        again.problem.c_str());
    QVERIFY2(again.problem.ends_with("; details in " + store_->log_file().string()),
             again.problem.c_str());
  }

  void aFaithfulBackendPassesOnceAndIsRemembered() {
    PerturbedBackend candidate(inner_);
    const GateOutcome first = check_backend_once(candidate, *store_, version("1.0"));
    QVERIFY2(first.passed, first.result.details.c_str());
    QVERIFY(first.ran_now);
    QVERIFY(first.problem.empty());
    QCOMPARE(first.record.key.devices, std::vector<std::string>{"Fake GPU 0 (sm_86)"});
    QCOMPARE(first.record.key.backend_version, std::string("fake runtime 1.0, driver 1.0"));

    const int calls = candidate.linear_calls;
    const GateOutcome second = check_backend_once(candidate, *store_, version("1.0"));
    QVERIFY(second.passed);
    QVERIFY(!second.ran_now);
    QCOMPARE(candidate.linear_calls, calls);
    QCOMPARE(second.record.checked_at, first.record.checked_at);
    QCOMPARE(second.record.summary, first.record.summary);

    // Asked for explicitly, it runs again.
    GateOptions forced = version("1.0");
    forced.force = true;
    QVERIFY(check_backend_once(candidate, *store_, forced).ran_now);
  }

  void aNewDriverQuireOrLibraryChecksAgain() {
    PerturbedBackend candidate(inner_);
    QVERIFY(check_backend_once(candidate, *store_, version("1.0")).ran_now);

    candidate.version_text = "fake runtime 1.0, driver 2.0";
    QVERIFY(check_backend_once(candidate, *store_, version("1.0")).ran_now);
    QVERIFY(!check_backend_once(candidate, *store_, version("1.0")).ran_now);

    QVERIFY(check_backend_once(candidate, *store_, version("1.1")).ran_now);

    candidate.architecture = "sm_89";  // another GPU
    QVERIFY(check_backend_once(candidate, *store_, version("1.1")).ran_now);

    const std::filesystem::path library = store_->log_file().parent_path() / "libfake.so";
    std::ofstream(library) << "one";
    GateOptions with_library = version("1.1");
    with_library.library = library;
    QVERIFY(check_backend_once(candidate, *store_, with_library).ran_now);
    QVERIFY(!check_backend_once(candidate, *store_, with_library).ran_now);
    std::ofstream(library) << "rebuilt";
    QVERIFY(check_backend_once(candidate, *store_, with_library).ran_now);

    // Going back to a driver checked before finds its outcome still there.
    candidate.version_text = "fake runtime 1.0, driver 1.0";
    candidate.architecture = "sm_86";
    QVERIFY(!check_backend_once(candidate, *store_, version("1.0")).ran_now);
  }

  void aWrongDriverAfterARightOneFails() {
    PerturbedBackend candidate(inner_);
    QVERIFY(check_backend_once(candidate, *store_, version("1.0")).passed);
    candidate.version_text = "fake runtime 1.0, driver 2.0";
    candidate.faults.linear_scale = 1.1f;
    const GateOutcome outcome = check_backend_once(candidate, *store_, version("1.0"));
    QVERIFY(outcome.ran_now);
    QVERIFY(!outcome.passed);
  }

  void aDamagedRecordFileIsIgnoredAndWrittenAnew() {
    PerturbedBackend candidate(inner_);
    QVERIFY(check_backend_once(candidate, *store_, version("1.0")).ran_now);
    for (const char* damaged :
         {"{\"format\": 1, \"checks\": [{\"quire_version\": ", "not json at all", "[]",
          "{\"format\": 1, \"checks\": [{\"quire_version\": 5}]}",
          "{\"format\": 99, \"checks\": []}", ""}) {
      std::ofstream(store_->record_file(), std::ios::trunc) << damaged;
      const GateOutcome outcome = check_backend_once(candidate, *store_, version("1.0"));
      QVERIFY2(outcome.ran_now, damaged);
      QVERIFY(outcome.passed);
      QVERIFY2(outcome.store_error.empty(), outcome.store_error.c_str());
      QVERIFY2(!check_backend_once(candidate, *store_, version("1.0")).ran_now, damaged);
    }
  }

  void anIncompleteCheckIsNotRemembered() {
    PerturbedBackend candidate(inner_);
    candidate.faults.failing_op = "paged_attention";
    const GateOutcome outcome = check_backend_once(candidate, *store_, version("1.0"));
    QVERIFY(!outcome.passed);
    QCOMPARE(outcome.problem,
             "the fake backend could not complete its self-check: device 0 (Fake GPU 0, sm_86): "
             "the check stopped with an error: the fake device failed; details in " +
                 store_->log_file().string());
    QVERIFY(!std::filesystem::exists(store_->record_file()));
    // Next time it runs again, and a working backend passes then.
    candidate.faults.failing_op.clear();
    const GateOutcome next = check_backend_once(candidate, *store_, version("1.0"));
    QVERIFY(next.ran_now);
    QVERIFY(next.passed);
  }

  void anUnwritableFolderStillDecides() {
    // A file where the folder should be: nothing can be remembered, but the
    // outcome holds for this run.
    const std::filesystem::path blocked = store_->log_file().parent_path();
    std::filesystem::create_directories(blocked.parent_path());
    std::ofstream(blocked) << "a file";
    PerturbedBackend candidate(inner_);
    candidate.faults.linear_scale = 1.1f;
    const GateOutcome outcome = check_backend_once(candidate, *store_, version("1.0"));
    QVERIFY(!outcome.passed);
    QVERIFY(!outcome.store_error.empty());
    QVERIFY2(!contains(outcome.problem, "details in"), outcome.problem.c_str());
  }

  void theDefaultFolderFollowsXdg() {
    const QByteArray saved = qgetenv("XDG_CACHE_HOME");
    qputenv("XDG_CACHE_HOME", "/somewhere/cache");
    QCOMPARE(SelfCheckStore::default_folder(), std::filesystem::path("/somewhere/cache/Quire"));
    qputenv("XDG_CACHE_HOME", "relative/is/ignored");
    const QByteArray home = qgetenv("HOME");
    QCOMPARE(SelfCheckStore::default_folder(),
             std::filesystem::path(home.toStdString()) / ".cache" / "Quire");
    qunsetenv("XDG_CACHE_HOME");
    QCOMPARE(SelfCheckStore::default_folder(),
             std::filesystem::path(home.toStdString()) / ".cache" / "Quire");
    if (!saved.isNull()) qputenv("XDG_CACHE_HOME", saved);
    const SelfCheckStore store("/x/Quire", "cuda");
    QCOMPARE(store.record_file(), std::filesystem::path("/x/Quire/cuda-self-check.json"));
    QCOMPARE(store.log_file(), std::filesystem::path("/x/Quire/cuda-self-check.log"));
  }
};

QUIRE_TEST(SelfCheckGateTest)
#include "test_self_check_gate.moc"
