// How the CUDA backend is built, checked without a GPU: a list of
// architectures configures and compiles (the list once broke the compile
// definition that names them), "desktop" names the release package's list,
// and every kernel's registers and shared memory fit the launch its host
// code makes (scripts/cuda_resources.py): on the architectures this build
// compiles, or on every architecture of the release list when
// QUIRE_CUDA_RESOURCES_ARCHITECTURES=desktop (the tests labelled "release");
// and the decode kernels' inner-loop probes (kernels/cuda/probes) neither
// spill nor exceed their instructions per weight (scripts/cuda_inner_loop.py)
// on the same architectures.

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include "test_main.h"

namespace {

struct Run {
  int exit_code = -1;
  QString output;
};

Run run(const QString& program, const QStringList& arguments, int timeout_ms) {
  QProcess process;
  process.setProcessChannelMode(QProcess::MergedChannels);
  process.start(program, arguments);
  Run result;
  if (!process.waitForStarted()) {
    result.output = program + " did not start: " + process.errorString();
    return result;
  }
  if (!process.waitForFinished(timeout_ms)) {
    process.kill();
    process.waitForFinished();
    result.output = program + " did not finish in time";
    return result;
  }
  result.output = QString::fromUtf8(process.readAll());
  result.exit_code = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
  return result;
}

// Configures the project's libraries alone (no app, no tests) into `build`.
Run configure(const QString& build, const QString& architectures) {
  return run(QUIRE_CMAKE,
             {"-S", QUIRE_SOURCE_DIR, "-B", build, "-G", "Ninja",
              "-DCMAKE_MAKE_PROGRAM=" + QString(QUIRE_MAKE_PROGRAM), "-DQUIRE_BUILD_APP=OFF",
              "-DQUIRE_BUILD_TESTS=OFF", "-DQUIRE_SANITIZE=OFF",
              "-DCMAKE_CUDA_ARCHITECTURES=" + architectures},
             300'000);
}

QString cache_value(const QString& build, const QString& name) {
  QFile cache(build + "/CMakeCache.txt");
  if (!cache.open(QIODevice::ReadOnly)) return {};
  for (const QByteArray& line : cache.readAll().split('\n')) {
    const QString text = QString::fromUtf8(line);
    if (text.startsWith(name + ":")) return text.section('=', 1);
  }
  return {};
}

// The --arch argument of cuda_resources.py: this build's architectures
// ("90", "75-real,...,120"), or none, which checks the whole release list,
// when asked for "desktop" or when the build names CMake's "all" or
// "native". Seven architectures take about seven times as long as one.
QStringList resource_check_arguments() {
  if (qEnvironmentVariable("QUIRE_CUDA_RESOURCES_ARCHITECTURES") == "desktop") return {};
  QStringList numbers;
  for (const QString& entry :
       QString(QUIRE_BUILD_CUDA_ARCHITECTURES).split(',', Qt::SkipEmptyParts)) {
    const QString number = entry.section('-', 0, 0);
    bool is_number = false;
    number.toInt(&is_number);
    if (!is_number) return {};
    numbers << number;
  }
  if (numbers.isEmpty()) return {};
  return {"--arch", numbers.join(',')};
}

}  // namespace

class CudaBuildTest : public QObject {
  Q_OBJECT

 private slots:
  // The list the README gives packagers, as CMake takes it: the definition
  // that carries it into the backend must compile.
  void aListOfArchitecturesConfiguresAndCompiles() {
    QTemporaryDir build;
    QVERIFY(build.isValid());
    const Run configured = configure(build.path(), "75;80;86;89;90;100;120");
    QVERIFY2(configured.exit_code == 0, qPrintable(configured.output));
    QVERIFY2(configured.output.contains("CUDA backend: enabled") &&
                 configured.output.contains("sm_75 (+PTX), sm_80 (+PTX)"),
             qPrintable(configured.output));
    // The one source that uses the definition, compiled alone.
    const Run built =
        run(QUIRE_MAKE_PROGRAM,
            {"-C", build.path(), "kernels/cuda/CMakeFiles/quire_cuda.dir/src/cuda_backend.cpp.o"},
            300'000);
    QVERIFY2(built.exit_code == 0, qPrintable(built.output));
  }

  void desktopNamesTheReleaseArchitectures() {
    QTemporaryDir build;
    QVERIFY(build.isValid());
    const Run configured = configure(build.path(), "desktop");
    QVERIFY2(configured.exit_code == 0, qPrintable(configured.output));
    QCOMPARE(cache_value(build.path(), "CMAKE_CUDA_ARCHITECTURES"),
             QString("75-real;80-real;86-real;89-real;90-real;100-real;120"));
    QVERIFY2(configured.output.contains("sm_75, sm_80, sm_86, sm_89, sm_90, sm_100, sm_120 (+PTX)"),
             qPrintable(configured.output));
  }

  // Registers times the declared block, and static shared memory, within a
  // block's limits for every kernel on every architecture checked; spills
  // are printed for whoever reads the log.
  void everyKernelFitsItsLaunchOnEveryArchitecture() {
    if (QString(QUIRE_PYTHON).isEmpty()) QFAIL("python3 is needed (scripts/setup-debian.sh)");
    const QStringList arguments =
        QStringList{QString(QUIRE_SOURCE_DIR) + "/scripts/cuda_resources.py", "--jobs", "2"} +
        resource_check_arguments();
    const Run checked = run(QUIRE_PYTHON, arguments, 3'000'000);
    for (const QString& line : checked.output.split('\n', Qt::SkipEmptyParts))
      qInfo("%s", qPrintable(line));
    QVERIFY2(checked.exit_code == 0, "a kernel does not fit its launch: see PROBLEM lines above");
  }

  // Each probe is one step of a decode product's inner loop: no spills on any
  // architecture checked, and the 4-bit probes of the new variants within
  // 2.0 SASS instructions per weight on sm_90 (the script's docstring).
  void innerLoopProbesStayWithinTheirInstructionBudget() {
    if (QString(QUIRE_PYTHON).isEmpty()) QFAIL("python3 is needed (scripts/setup-debian.sh)");
    const QStringList arguments =
        QStringList{QString(QUIRE_SOURCE_DIR) + "/scripts/cuda_inner_loop.py", "--jobs", "2"} +
        resource_check_arguments();
    const Run checked = run(QUIRE_PYTHON, arguments, 3'000'000);
    for (const QString& line : checked.output.split('\n', Qt::SkipEmptyParts))
      qInfo("%s", qPrintable(line));
    QVERIFY2(checked.exit_code != 2, "cuda_inner_loop.py could not count: see its message above");
    QVERIFY2(checked.exit_code == 0,
             "a probe spills or takes too many instructions per weight: see PROBLEM lines above");
  }
};

QUIRE_TEST(CudaBuildTest)
#include "test_cuda_build.moc"
