#include "quire/hub/quantization_survey.h"

#include <algorithm>

#include "quire/hub/hub_client.h"

namespace quire::hub {
namespace {

constexpr int kParallelListings = 4;

// What a repository without config.json holds, in a user's words.
QString describe_contents(const std::vector<std::string>& names) {
  const auto has_suffix = [&](const char* suffix) {
    return std::any_of(names.begin(), names.end(),
                       [&](const std::string& name) { return name.ends_with(suffix); });
  };
  if (has_suffix(".gguf"))
    return QStringLiteral(
        "It holds GGUF files, which Quire does not run; look for an EXL2, EXL3, GPTQ, AWQ, "
        "FP8 or FP16 (safetensors) repository of the same model.");
  if (has_suffix(".bin") || has_suffix(".pt") || has_suffix(".pth"))
    return QStringLiteral(
        "It holds PyTorch pickle files (.bin) rather than safetensors, which Quire does not "
        "open; look for a safetensors repository of the same model.");
  return QStringLiteral(
      "No branch holds a config.json, so it holds no model Quire can open (it may be a "
      "dataset, an adapter or a GGUF-only repository).");
}

}  // namespace

QuantizationSurvey::QuantizationSurvey(HubClient* client, QString repo, QObject* parent)
    : QObject(parent), client_(client), repo_(std::move(repo)) {}

void QuantizationSurvey::start() {
  client_->refs(repo_, [this](std::optional<RepoRefs> refs, const QString& error) {
    if (over_) return;
    if (!refs) {
      over_ = true;
      emit failed(error);
      return;
    }
    std::vector<std::string> branches;
    for (const GitRef& branch : refs->branches)
      branches.push_back(branch.name);
    if (branches.empty()) branches.emplace_back("main");
    listBranches(branches);
  });
}

void QuantizationSurvey::listBranches(const std::vector<std::string>& branches) {
  branches_ = branches;
  std::sort(branches_.begin(), branches_.end(), revision_before);
  if (static_cast<int>(branches_.size()) > kMaxBranches) {
    branches_.resize(kMaxBranches);
    truncated_ = true;
  }
  for (int i = 0; i < kParallelListings; ++i)
    listNext();
}

void QuantizationSurvey::listNext() {
  if (over_) return;
  if (next_ >= branches_.size()) {
    if (running_ == 0) finish();
    return;
  }
  const std::string branch = branches_[next_++];
  ++running_;
  client_->modelInfo(repo_, QString::fromStdString(branch),
                     [this, branch](std::optional<ModelInfo> info, const QString& error) {
                       --running_;
                       if (over_) return;
                       if (!info) {
                         errors_ << error;
                       } else {
                         for (Quantization& quantization : quantizations_in(branch, *info))
                           found_.push_back(std::move(quantization));
                         for (const RepoFile& file : info->files)
                           if (file_names_.size() < 200) file_names_.push_back(file.path);
                       }
                       listNext();
                     });
}

void QuantizationSurvey::finish() {
  over_ = true;
  if (found_.empty() && !errors_.isEmpty() &&
      errors_.size() == static_cast<qsizetype>(branches_.size())) {
    emit failed(errors_.front());
    return;
  }
  std::sort(found_.begin(), found_.end(), [](const Quantization& a, const Quantization& b) {
    if (a.revision != b.revision) return revision_before(a.revision, b.revision);
    return a.subfolder < b.subfolder;
  });
  QString why;
  if (found_.empty()) why = describe_contents(file_names_);
  if (truncated_)
    why += (why.isEmpty() ? QString() : QStringLiteral(" ")) +
           QStringLiteral("The repository has more than %1 branches; the first %1 are listed.")
               .arg(kMaxBranches);
  emit finished(found_, why);
}

}  // namespace quire::hub
