#include "bad_model_support.h"

#include <QFile>
#include <QProcess>
#include <tuple>

#include "quire/engine/io/safetensors_file.h"
#include "quire/engine/io/safetensors_writer.h"

namespace quire::test {

Run run_cli(const QStringList& arguments) {
  QProcess process;
  process.start(QStringLiteral(QUIRE_CLI_PATH), arguments);
  process.waitForFinished(120000);
  return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
          QString::fromUtf8(process.readAllStandardError())};
}

QByteArray read(const QString& path) {
  QFile file(path);
  file.open(QIODevice::ReadOnly);
  return file.readAll();
}

void write(const QString& path, const QByteArray& bytes) {
  QFile file(path);
  file.open(QIODevice::WriteOnly | QIODevice::Truncate);
  file.write(bytes);
}

void rewrite_tensors(
    const QString& dir,
    const std::function<bool(const engine::io::TensorInfo&, std::vector<std::int64_t>&)>& keep) {
  const std::filesystem::path path = dir.toStdString() + "/model.safetensors";
  std::vector<
      std::tuple<std::string, kernels::DType, std::vector<std::int64_t>, std::vector<std::byte>>>
      tensors;
  {
    const engine::io::SafetensorsFile file = engine::io::SafetensorsFile::open(path);
    for (const engine::io::TensorInfo& info : file.tensors()) {
      std::vector<std::int64_t> shape = info.shape;
      if (!keep(info, shape)) continue;
      const std::span<const std::byte> data = file.data(info);
      std::vector<std::byte> bytes(data.begin(), data.end());
      std::int64_t elements = 1;
      for (std::int64_t d : shape)
        elements *= d;
      bytes.resize(static_cast<std::size_t>(elements) * kernels::dtype_size(info.dtype));
      tensors.emplace_back(info.name, info.dtype, shape, std::move(bytes));
    }
  }
  engine::io::SafetensorsWriter writer;
  for (auto& [name, dtype, shape, bytes] : tensors)
    writer.add(name, dtype, shape, std::move(bytes));
  writer.write(path);
}

void edit_tensor(const QString& dir, const std::string& name,
                 const std::function<void(std::vector<std::byte>&)>& edit) {
  const std::filesystem::path path = dir.toStdString() + "/model.safetensors";
  engine::io::SafetensorsWriter writer;
  {
    const engine::io::SafetensorsFile file = engine::io::SafetensorsFile::open(path);
    for (const engine::io::TensorInfo& info : file.tensors()) {
      const std::span<const std::byte> data = file.data(info);
      std::vector<std::byte> bytes(data.begin(), data.end());
      if (info.name == name) edit(bytes);
      writer.add(info.name, info.dtype, info.shape, std::move(bytes));
    }
  }
  writer.write(path);
}

}  // namespace quire::test
