#include "settings_fixtures.h"

#include <QDebug>
#include <QDir>
#include <QPixmap>
#include <QTest>
#include <QWidget>

namespace quire::ui::test {
namespace {

PlanDeviceView device(const QString& name, qint64 weights, qint64 cache, qint64 free_before) {
  PlanDeviceView d;
  d.name = name;
  d.weights = weights;
  d.cache = cache;
  d.scratch = 300 * kMiB;
  d.reserve = 256 * kMiB;
  d.free_before = free_before;
  d.free_after = free_before - weights - cache - d.scratch;
  d.used = true;
  return d;
}

}  // namespace

QStringList two_gpus() {
  return {QStringLiteral("cuda0: NVIDIA GeForce RTX 4090"),
          QStringLiteral("cuda1: NVIDIA GeForce RTX 3090")};
}

EngineSettings sample_settings(const QString& model_directory) {
  EngineSettings s;
  s.model_directory = model_directory;
  s.recent_models = {model_directory, QStringLiteral("/models/Mistral-7B-exl2-4.0bpw")};
  s.backend = QStringLiteral("cuda");
  s.devices = {1};
  s.split = EngineSettings::Split::Manual;
  s.manual_gb = {0, 20.5};
  s.reserve_mib = 512;
  s.max_context = 16384;
  s.cache_format = QStringLiteral("q4");
  s.cache_tokens = 65536;
  s.reserve_pages = QStringLiteral("on-demand");
  s.host_cache_mib = 4096;
  s.disk_cache = true;
  s.disk_cache_mib = 8192;
  s.residual_window = 4;
  s.cache_residence = QStringLiteral("device");
  s.cache_device = -1;
  s.max_batch = 8;
  s.chunk_size = 512;
  s.sampling.temperature = 0.7;
  s.sampling.top_p = 0.9;
  s.sampling.min_p = 0.1;
  s.sampling.repetition_penalty = 1.15;
  s.sampling.top_k = 30;
  s.drafts.method = QStringLiteral("ngram");
  s.drafts.max_tokens = 6;
  s.system_prompt = QStringLiteral("You are terse.\nAnswer in one line.");
  s.prompt_format = QStringLiteral("chatml");
  return s;
}

PlanView fitting_plan() {
  PlanView plan;
  plan.valid = true;
  plan.fits = true;
  plan.verdict = QStringLiteral("fits");
  plan.devices = {
      device(two_gpus().at(0), 10 * kGiB + 512 * kMiB, 2 * kGiB, 23 * kGiB + 512 * kMiB),
      device(two_gpus().at(1), 8 * kGiB, 1536 * kMiB, 23 * kGiB),
  };
  plan.largest_context_tokens = 253696;
  return plan;
}

QString overflow_verdict() {
  return QStringLiteral(
      "does not fit: needs 27436 MiB on device 1 (cuda1: NVIDIA GeForce RTX 3090), has 23296 MiB "
      "free after the 256 MiB reserve — lower the context to 98304 tokens, use a smaller cache "
      "format, or add a device");
}

PlanView overflowing_plan() {
  PlanView plan;
  plan.valid = true;
  plan.fits = false;
  plan.verdict = overflow_verdict();
  plan.devices = {
      device(two_gpus().at(0), 12 * kGiB, 10 * kGiB, 23 * kGiB + 512 * kMiB),
      device(two_gpus().at(1), 6656 * kMiB, 20 * kGiB, 23 * kGiB),
  };
  plan.largest_context_tokens = 98304;
  return plan;
}

void save_screenshot(QWidget& widget, const QString& file_name) {
  const QString directory = qEnvironmentVariable("QUIRE_SCREENSHOT_DIR");
  if (directory.isEmpty()) return;
  QDir().mkpath(directory);
  // Let posted layout requests run, so the grab shows the latest texts laid out.
  QTest::qWait(50);
  widget.grab().save(QDir(directory).filePath(file_name));
}

}  // namespace quire::ui::test

namespace quire::ui {

char* toString(const EngineSettings& s) {
  QString text;
  QDebug(&text).nospace() << "{dir=" << s.model_directory << " recent=" << s.recent_models
                          << " backend=" << s.backend << " devices=" << s.devices
                          << " split=" << split_id(s.split) << " manual_gb=" << s.manual_gb
                          << " reserve=" << s.reserve_mib << "/" << s.device_reserve_mib
                          << " max_context=" << s.max_context << " cache=" << s.cache_format << "/"
                          << s.cache_tokens << " host=" << s.host_cache_mib
                          << " disk=" << s.disk_cache << "/" << s.disk_cache_mib
                          << " window=" << s.residual_window << " pages=" << s.reserve_pages
                          << " lives=" << s.cache_residence << "/" << s.cache_device
                          << " batch=" << s.max_batch << " chunk=" << s.chunk_size
                          << " T=" << s.sampling.temperature << " top_p=" << s.sampling.top_p
                          << " min_p=" << s.sampling.min_p
                          << " rep=" << s.sampling.repetition_penalty
                          << " top_k=" << s.sampling.top_k << " system=" << s.system_prompt
                          << " format=" << s.prompt_format << "}";
  return qstrdup(text.toUtf8().constData());
}

}  // namespace quire::ui
