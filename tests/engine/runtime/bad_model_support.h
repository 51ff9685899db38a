#pragma once

// Helpers of the broken-model suites: running quire-cli, and damaging the
// files of a good model directory.

#include <QByteArray>
#include <QString>
#include <QStringList>
#include <functional>
#include <vector>

#include "quire/engine/io/model_tensors.h"

namespace quire::test {

struct Run {
  int exit_code = -1;
  QString err;
};

Run run_cli(const QStringList& arguments);
QByteArray read(const QString& path);
void write(const QString& path, const QByteArray& bytes);

// Rewrites model.safetensors, keeping the tensors `keep` accepts; it may
// change their shape (the bytes are cut or padded with zeros to fit).
void rewrite_tensors(
    const QString& dir,
    const std::function<bool(const engine::io::TensorInfo&, std::vector<std::int64_t>&)>& keep);

// Rewrites model.safetensors with the bytes of tensor `name` changed by `edit`.
void edit_tensor(const QString& dir, const std::string& name,
                 const std::function<void(std::vector<std::byte>&)>& edit);

}  // namespace quire::test
