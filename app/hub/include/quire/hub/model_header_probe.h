#pragma once

// Enough of a quantization to plan it before it is downloaded: its small
// JSON files whole (config.json, the shard index, quantization_config.json)
// and each safetensors file's header, fetched with ranged requests and
// written into a folder where each safetensors file has its full size but
// is sparse past its header. The engine then reads that folder exactly as it
// would read the downloaded model (names, shapes, dtypes, byte counts, and
// the small tables its checks look into: described_ranges.h), and
// the planner prices it for the user's devices: a few hundred kilobytes
// instead of gigabytes.

#include <QByteArray>
#include <QObject>
#include <QString>
#include <functional>
#include <vector>

#include "quire/hub/repo_quantizations.h"

namespace quire::hub {

class HubClient;

// A byte range of a file at /resolve/{commit}/{path}: redirects to the file
// host followed without the token, transient failures retried as the
// client's RetryPolicy says. `last` -1: to the end. A server that ignores
// Range is read only as far as needed.
void fetch_file_bytes(HubClient* client, const QString& repo, const QString& commit,
                      const QString& path, qint64 first, qint64 last,
                      std::function<void(const QByteArray& bytes, const QString& error)> done,
                      QObject* context);

class ModelHeaderProbe : public QObject {
  Q_OBJECT

 public:
  // The longest header read (the safetensors reference's own limit).
  static constexpr qint64 kMaxHeaderBytes = 100'000'000;
  // The first request of each shard; most headers fit in it.
  static constexpr qint64 kFirstReadBytes = 256 * 1024;
  // Small files fetched whole are at most this big.
  static constexpr qint64 kMaxSmallFileBytes = 16 * 1024 * 1024;

  ModelHeaderProbe(HubClient* client, QString repo, Quantization quantization, QString folder,
                   QObject* parent = nullptr);

  void start();
  const Quantization& quantization() const { return quantization_; }

  // The files of a quantization the probe reads: its small JSON files whole,
  // its safetensors files' headers (paths from the repository's root).
  static bool isReadWhole(const std::string& name);

 signals:
  void finished(const QString& folder);
  void failed(const QString& error);

 private:
  struct Job {
    enum class Kind { Whole, Header, Range };
    RepoFile file;
    QString local;  // the path inside folder_
    Kind kind = Kind::Whole;
    qint64 first = 0;  // Range: the bytes, both ends included
    qint64 last = 0;
  };
  void runNext();
  void fetchWhole(const Job& job);
  void fetchHeader(const Job& job);
  void writeHeaderFile(const Job& job, const QByteArray& header_with_length);
  void fetchRange(const Job& job);
  void jobDone(const QString& error);

  HubClient* client_;
  QString repo_;
  Quantization quantization_;
  QString folder_;
  std::vector<Job> jobs_;
  std::size_t next_ = 0;
  int running_ = 0;
  bool over_ = false;
};

}  // namespace quire::hub
