// The preset file format and the presets shipped with Quire.

#include "quire/app/presets/preset.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>

#include "quire/app/store/chat_settings_json.h"

namespace quire::presets {

store::ChatSettings preset_values(const store::ChatSettings& settings) {
  store::ChatSettings values = settings;
  values.tools_enabled.reset();
  values.always_allowed_tools.clear();
  return values;
}

QString preset_name_problem(const QString& name) {
  if (name.trimmed().isEmpty()) return QStringLiteral("a preset needs a name");
  if (name != name.trimmed())
    return QStringLiteral("a preset name cannot start or end with spaces");
  if (name.startsWith(u'.')) return QStringLiteral("a preset name cannot start with '.'");
  // Long names are refused rather than cut: the file name must give the name back.
  if (name.size() > 100) return QStringLiteral("a preset name can have at most 100 characters");
  for (const QChar c : name) {
    // Characters some file system refuses or treats specially.
    if (QStringView(u"/\\:*?\"<>|").contains(c))
      return QStringLiteral("a preset name cannot contain '%1'").arg(c);
    if (c.category() == QChar::Other_Control)
      return QStringLiteral("a preset name cannot contain control characters");
  }
  return {};
}

QByteArray preset_to_json(const Preset& preset) {
  const QJsonObject root{
      {QStringLiteral("format"), QString::fromLatin1(kPresetFileFormat)},
      {QStringLiteral("version"), kPresetFileVersion},
      {QStringLiteral("name"), preset.name},
      {QStringLiteral("settings"), store::chat_settings_to_json(preset_values(preset.settings))},
  };
  return QJsonDocument(root).toJson(QJsonDocument::Indented);
}

std::optional<Preset> preset_from_json(const QByteArray& json, QString* error) {
  const auto fail = [error](const QString& problem) {
    if (error != nullptr) *error = problem;
    return std::nullopt;
  };
  QJsonParseError parse{};
  const QJsonDocument parsed = QJsonDocument::fromJson(json, &parse);
  if (parse.error != QJsonParseError::NoError) {
    return fail(QStringLiteral("not valid JSON (%1 at byte %2)")
                    .arg(parse.errorString())
                    .arg(parse.offset));
  }
  const QJsonObject root = parsed.object();
  if (!parsed.isObject() ||
      root.value(QStringLiteral("format")).toString() != QLatin1String(kPresetFileFormat)) {
    return fail(QStringLiteral("not a Quire preset (no \"format\": \"%1\")")
                    .arg(QLatin1String(kPresetFileFormat)));
  }
  const QJsonValue version = root.value(QStringLiteral("version"));
  if (!version.isDouble() || version.toInt(-1) < 1)
    return fail(QStringLiteral("version: expected a positive integer"));
  if (version.toInt() > kPresetFileVersion) {
    return fail(QStringLiteral("written by a newer version of Quire (preset version %1; this "
                               "version reads up to %2). Update Quire to use it.")
                    .arg(version.toInt())
                    .arg(kPresetFileVersion));
  }
  Preset preset;
  const QJsonValue name = root.value(QStringLiteral("name"));
  if (!name.isUndefined() && !name.isNull()) {
    if (!name.isString()) return fail(QStringLiteral("name: expected a string"));
    preset.name = name.toString();
    const QString problem = preset_name_problem(preset.name);
    if (!problem.isEmpty()) return fail(QStringLiteral("name: ") + problem);
  }
  const QJsonValue settings = root.value(QStringLiteral("settings"));
  if (settings.isUndefined()) return fail(QStringLiteral("settings: missing"));
  const std::optional<store::ChatSettings> values =
      store::chat_settings_from_json(settings, QStringLiteral("settings"), error);
  if (!values) return std::nullopt;
  preset.settings = preset_values(*values);
  return preset;
}

std::optional<Preset> read_preset_file(const QString& path, QString* error) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) {
    if (error != nullptr) *error = QStringLiteral("%1: %2").arg(path, file.errorString());
    return std::nullopt;
  }
  QString problem;
  std::optional<Preset> preset = preset_from_json(file.readAll(), &problem);
  if (!preset && error != nullptr) *error = QStringLiteral("%1: %2").arg(path, problem);
  return preset;
}

QList<Preset> built_in_presets() {
  const auto make = [](const char* name, const char* prompt, double temperature, double top_p,
                       double min_p, double repetition_penalty, std::optional<int> max_new_tokens) {
    Preset preset;
    preset.name = QString::fromLatin1(name);
    preset.built_in = true;
    preset.settings.system_prompt = QString::fromLatin1(prompt);
    preset.settings.temperature = temperature;
    preset.settings.top_p = top_p;
    preset.settings.min_p = min_p;
    preset.settings.repetition_penalty = repetition_penalty;
    preset.settings.max_new_tokens = max_new_tokens;
    return preset;
  };
  // None sets a prompt format: the model's own template is right for each.
  return {
      // Facts and instructions: a low temperature keeps to the most likely
      // answer; min_p 0.05 still cuts the tail that a low temperature leaves.
      make("Precise",
           "You are a careful assistant. Answer accurately and concisely, and say so when you "
           "are not sure.",
           0.2, 1.0, 0.05, 1.0, std::nullopt),
      // Everyday chat: 0.7 is the common default of chat front ends, with a
      // light repetition penalty against loops in long replies.
      make("Balanced", "You are a helpful assistant.", 0.7, 0.95, 0.05, 1.05, std::nullopt),
      // Stories and ideas: min_p 0.1 keeps a temperature of 1.2 coherent (it
      // scales the cut with the top token's probability, as its authors show),
      // where top_p would let the tail in; a longer reply for prose.
      make("Creative",
           "You are an imaginative writing partner. Write vividly, vary your phrasing and take "
           "the story in unexpected directions.",
           1.2, 1.0, 0.1, 1.05, 2048),
      // Code: near-greedy, and no repetition penalty, which would punish the
      // identifiers and brackets code must repeat; room for whole files.
      make("Code",
           "You are an expert programmer. Write correct, idiomatic code with brief explanations. "
           "Put code in fenced blocks with the language named.",
           0.1, 1.0, 0.05, 1.0, 4096),
  };
}

}  // namespace quire::presets
