#include "remote_engine.h"

#include <algorithm>

#include "quire/remote/api_key_store.h"
#include "quire/remote/chat_request.h"

namespace quire::gui {
namespace {

EngineFailure connect_failure(const QString& detail, const QString& advice = {}) {
  return EngineFailure{EngineFailure::Kind::NoModel,
                       QStringLiteral("The remote engine cannot be used"), detail, advice};
}

// The endpoint's finish reasons in the words the store keeps for local replies.
QString stop_reason_of(const QString& finish_reason) {
  if (finish_reason == QLatin1String("length")) return QStringLiteral("max_tokens");
  if (finish_reason == QLatin1String("cancelled") || finish_reason == QLatin1String("error"))
    return finish_reason;
  return QStringLiteral("eos");
}

std::string role_of(store::Role role) {
  switch (role) {
    case store::Role::System:
      return "system";
    case store::Role::User:
      return "user";
    case store::Role::Assistant:
      return "assistant";
    case store::Role::Tool:
      return "tool";
  }
  return "user";
}

}  // namespace

RemoteEngine::RemoteEngine(remote::ApiKeyStore& keys, QObject* parent)
    : QObject(parent), keys_(keys) {
  connect(&client_, &remote::RemoteClient::modelsListed, this, &RemoteEngine::onListed);
  connect(&client_, &remote::RemoteClient::listFailed, this, &RemoteEngine::onListFailed);
  connect(&client_, &remote::RemoteClient::chatText, this, &RemoteEngine::replyText);
  connect(&client_, &remote::RemoteClient::chatFinished, this, &RemoteEngine::onFinished);
  connect(&lister_, &remote::RemoteClient::modelsListed, this,
          [this](quint64 id, const QList<remote::RemoteModel>& models) {
            if (id != listing_) return;
            QStringList names;
            for (const remote::RemoteModel& model : models)
              names << QString::fromStdString(model.id);
            emit modelsListedFor(names, QString());
          });
  connect(&lister_, &remote::RemoteClient::listFailed, this,
          [this](quint64 id, const QString& message) {
            if (id == listing_) emit modelsListedFor({}, message);
          });
}

RemoteEngine::~RemoteEngine() = default;

void RemoteEngine::connectTo(quint64 id, const ui::EngineSettings& settings) {
  QString problem;
  const std::optional<QUrl> base = remote::endpoint_base_url(settings.remote_url, &problem);
  if (!base) {
    emit connectFailed(id, connect_failure(problem, QStringLiteral("Enter the engine's address in "
                                                                   "Settings, such as "
                                                                   "http://gpu-box:8000/v1.")));
    return;
  }
  pending_ = id;
  pending_settings_ = settings;
  const QString address = base->toString();
  keys_.read(address, [this, id, base = *base](const QString& key, const QString&) {
    if (pending_ != id) return;
    pending_endpoint_ = remote::RemoteEndpoint{base, key};
    client_.listModels(id, pending_endpoint_);
  });
}

void RemoteEngine::listModelsAt(const QString& url, const QString& key) {
  QString problem;
  const std::optional<QUrl> base = remote::endpoint_base_url(url, &problem);
  if (!base) {
    emit modelsListedFor({}, problem);
    return;
  }
  lister_.listModels(++listing_, remote::RemoteEndpoint{*base, key});
}

void RemoteEngine::onListed(quint64 id, const QList<remote::RemoteModel>& models) {
  if (pending_ != id) return;
  pending_ = 0;
  const remote::RemoteEndpoint& endpoint = pending_endpoint_;
  const QString wanted = pending_settings_.remote_model.trimmed();
  const remote::RemoteModel* chosen = nullptr;
  QStringList names;
  for (const remote::RemoteModel& model : models) {
    names << QString::fromStdString(model.id);
    if (!chosen && (wanted.isEmpty() || QString::fromStdString(model.id) == wanted))
      chosen = &model;
  }
  if (!chosen) {
    emit connectFailed(
        id,
        models.isEmpty()
            ? connect_failure(QStringLiteral("%1 serves no model").arg(endpoint.name()),
                              QStringLiteral("Load a model in that engine first."))
            : connect_failure(QStringLiteral("%1 serves no model \"%2\"; it serves %3")
                                  .arg(endpoint.name(), wanted, names.join(QStringLiteral(", "))),
                              QStringLiteral("Choose one of them in Settings.")));
    return;
  }
  stopAll();
  model_ = Model{endpoint, *chosen};
  ModelInfo info;
  info.directory = endpoint.base.toString();
  info.name = QString::fromStdString(chosen->id);
  info.backend = QStringLiteral("remote");
  info.devices = {endpoint.name()};
  info.context_tokens = chosen->context_tokens;
  info.prompt_format = QStringLiteral("remote");
  info.prompt_format_title =
      QStringLiteral("the chat template of the engine at %1").arg(endpoint.name());
  // Token ids are never exchanged with the endpoint; nothing stored under
  // a local model's key is reused for it, nor the other way round.
  info.render_key = QStringLiteral("remote ") + info.directory + QLatin1Char(' ') + info.name;
  emit connected(id, info);
}

void RemoteEngine::onListFailed(quint64 id, const QString& message) {
  if (pending_ != id) return;
  pending_ = 0;
  emit connectFailed(id, connect_failure(message));
}

void RemoteEngine::disconnectEndpoint() {
  pending_ = 0;
  stopAll();
  model_.reset();
}

void RemoteEngine::stopAll() {
  // Each stop ends its reply at once (replyFinished, "cancelled"), which
  // erases it from replies_: the ids are copied first.
  std::vector<qint64> running;
  for (const auto& [reply, chat] : replies_)
    running.push_back(reply);
  for (const qint64 reply : running)
    client_.stop(reply);
}

void RemoteEngine::startReply(const ReplyRequest& request) {
  if (!model_) {
    ReplyOutcome outcome;
    outcome.reply_id = request.reply_id;
    outcome.chat_id = request.chat_id;
    outcome.stats.stop_reason = QStringLiteral("error");
    outcome.error = QStringLiteral("No remote engine is connected.");
    emit replyFinished(outcome);
    return;
  }
  std::vector<remote::ChatMessage> messages;
  if (!request.system_prompt.trimmed().isEmpty())
    messages.push_back({"system", request.system_prompt.toStdString()});
  for (const TurnMessage& message : request.history) {
    remote::ChatMessage sent(role_of(message.role), message.text.toStdString());
    for (const store::ToolCall& call : message.tool_calls) {
      sent.tool_calls.push_back(
          {call.id.toStdString(), call.name.toStdString(), call.arguments.toStdString()});
    }
    sent.tool_call_id = message.tool_call_id.toStdString();
    messages.push_back(std::move(sent));
  }
  remote::ChatSampling sampling;
  sampling.temperature = request.sampling.temperature;
  sampling.top_p = request.sampling.top_p;
  sampling.top_k = request.sampling.top_k;
  sampling.min_p = request.sampling.min_p;
  sampling.repetition_penalty = request.sampling.repetition_penalty;
  const ui::TunedSampling& tuned = request.sampling.tuned;
  sampling.dry_multiplier = tuned.dry_multiplier;
  sampling.dry_base = tuned.dry_base;
  sampling.dry_allowed_length = tuned.dry_allowed_length;
  sampling.dry_range = tuned.dry_range;
  for (const QString& breaker : tuned.dry_sequence_breakers)
    sampling.dry_sequence_breakers.push_back(breaker.toStdString());
  sampling.xtc_threshold = tuned.xtc_threshold;
  sampling.xtc_probability = tuned.xtc_probability;
  sampling.top_n_sigma = tuned.top_n_sigma;
  sampling.mirostat = tuned.mirostat;
  sampling.mirostat_tau = tuned.mirostat_tau;
  sampling.mirostat_eta = tuned.mirostat_eta;
  for (const QString& text : request.banned_strings)
    sampling.banned_strings.push_back(text.toStdString());
  for (auto it = request.logit_bias_text.begin(); it != request.logit_bias_text.end(); ++it)
    sampling.logit_bias_text[it.key().toStdString()] = it.value();
  const std::string body =
      remote::chat_request_body(model_->served, messages, sampling, request.max_new_tokens,
                                request.context_overflow.toStdString());
  const bool was_idle = replies_.empty();
  replies_[request.reply_id] = request.chat_id;
  client_.startChat(request.reply_id, model_->endpoint, QByteArray::fromStdString(body));
  if (was_idle && !replies_.empty()) emit busyChanged(true);
}

void RemoteEngine::stopReply(qint64 reply_id) {
  client_.stop(reply_id);
}

void RemoteEngine::onFinished(qint64 reply_id, const remote::RemoteChatResult& result) {
  const auto found = replies_.find(reply_id);
  if (found == replies_.end()) return;
  ReplyOutcome outcome;
  outcome.reply_id = reply_id;
  outcome.chat_id = found->second;
  replies_.erase(found);
  outcome.text = result.text;
  outcome.error = result.error;
  store::GenerationStats& stats = outcome.stats;
  stats.stop_reason = stop_reason_of(result.finish_reason);
  stats.time_to_first_token_ms = result.time_to_first_token_ms;
  stats.tokens_per_second = result.tokens_per_second;
  if (result.usage) {
    stats.prompt_tokens = static_cast<int>(result.usage->prompt_tokens);
    // -1 where the engine does not say (Ollama, SGLang without its option):
    // the window then shows no cache figure rather than a wrong 0.
    const std::int64_t cached = result.usage->cached_tokens.value_or(-1);
    stats.cached_tokens = static_cast<int>(cached);
    stats.computed_tokens = cached < 0 ? -1 : stats.prompt_tokens - stats.cached_tokens;
    stats.generated_tokens = static_cast<int>(result.usage->completion_tokens);
    outcome.context_used = result.usage->prompt_tokens + result.usage->completion_tokens;
    // Only a Quire server takes the chat's policy, and says what it dropped;
    // for another engine the reply claims no policy it did not apply.
    if (const std::optional<remote::ContextDrop>& drop = result.usage->context_drop) {
      outcome.context_overflow = QString::fromStdString(drop->policy);
      outcome.trimmed_turns = static_cast<int>(drop->dropped_turns);
      outcome.trimmed_first_turn =
          static_cast<int>(std::max<std::int64_t>(drop->first_dropped_turn - 1, 0));
      outcome.trimmed_tokens = drop->dropped_tokens;
      outcome.recomputed_tokens = drop->recomputed_tokens;
    }
  } else {
    stats.cached_tokens = -1;
    stats.computed_tokens = -1;
    stats.generated_tokens = result.text_chunks;
  }
  if (model_) {
    stats.model = QString::fromStdString(model_->served.id);
    stats.endpoint = model_->endpoint.name();
    outcome.context_limit = model_->served.context_tokens;
  }
  emit replyFinished(outcome);
  if (replies_.empty()) emit busyChanged(false);
}

}  // namespace quire::gui
