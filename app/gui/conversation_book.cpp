#include "conversation_book.h"

#include <QCryptographicHash>
#include <QLocale>
#include <algorithm>
#include <stdexcept>

#include "quire/app/images/prompt_images.h"

namespace quire::gui {
namespace {

// Tokens a message adds besides its text: the turn markers of any format.
constexpr std::int64_t kMarkerAllowance = 16;

std::string utf8(const QString& text) {
  return text.toStdString();
}

using Limits = ConversationBook::Limits;

engine::Role engine_role(store::Role role) {
  switch (role) {
    case store::Role::System:
      return engine::Role::System;
    case store::Role::User:
      return engine::Role::User;
    case store::Role::Assistant:
      return engine::Role::Assistant;
    case store::Role::Tool:
      return engine::Role::Tool;
  }
  return engine::Role::User;
}

std::vector<engine::tools::ToolCall> engine_calls(const QList<store::ToolCall>& calls) {
  std::vector<engine::tools::ToolCall> converted;
  for (const store::ToolCall& call : calls)
    converted.push_back({utf8(call.id), utf8(call.name), utf8(call.arguments)});
  return converted;
}

nlohmann::ordered_json tools_of(const ReplyRequest& request) {
  if (request.tools.isEmpty()) return nullptr;
  nlohmann::ordered_json tools =
      nlohmann::ordered_json::parse(request.tools.toStdString(), nullptr, false);
  return tools.is_array() && !tools.empty() ? tools : nlohmann::ordered_json(nullptr);
}

std::int64_t model_or_cache(const Limits& limits) {
  if (limits.model_tokens > 0) return std::min(limits.cache_tokens, limits.model_tokens);
  return limits.cache_tokens;
}

std::int64_t context_limit(const ReplyRequest& request, const Limits& limits) {
  const std::int64_t most = model_or_cache(limits);
  return request.max_context > 0 ? std::min<std::int64_t>(most, request.max_context) : most;
}

// A count as the rest of the window writes it ("48,015" where the locale
// groups digits).
std::string count_text(std::int64_t count) {
  return QLocale().toString(static_cast<qint64>(count)).toStdString();
}

// Names what caps the context and offers only a way out that can work: no
// setting makes a model read past its max_position_embeddings, and a longer
// context is only offered when the cache (or a larger one the model can
// read) would hold the whole message.
// `images`: how many of the estimate are the message's image positions,
// which grow with an image's size for some models (Mistral Small 3).
std::string overflow_text(const ReplyRequest& request, const Limits& limits, std::int64_t estimate,
                          std::int64_t reserve, std::int64_t images) {
  const std::int64_t limit = context_limit(request, limits);
  const std::int64_t needed = estimate + reserve;
  const std::string of_images =
      images > 0 ? " (" + count_text(images) + " of them its images)" : std::string();
  const std::string needs = "the message takes about " + count_text(estimate) + " tokens" +
                            of_images + " and " + count_text(reserve) +
                            " are kept for the reply: more than ";
  const std::string tokens = count_text(limit) + " tokens";
  const bool model_caps = limits.model_tokens > 0 && limits.model_tokens <= limit;
  if (model_caps) {
    return needs + "the model's " + tokens + " (the most it reads at once). Shorten the message.";
  }
  // Past the model's own length no setting helps.
  const bool beyond_model = limits.model_tokens > 0 && needed > limits.model_tokens;
  const std::string beyond = beyond_model
                                 ? " It is also more than the " + count_text(limits.model_tokens) +
                                       " tokens this model reads at once: shorten the message."
                                 : std::string();
  if (limits.cache_tokens <= limit) {
    if (beyond_model) return needs + "the cache's " + tokens + "." + beyond;
    return needs + "the cache's " + tokens + ". Shorten the message, or give the cache at least " +
           count_text(needed) + " tokens in Settings, then Retry.";
  }
  const std::string set = needs + "the context of " + tokens + " set in Settings.";
  if (beyond_model) return set + beyond;
  const std::int64_t most = model_or_cache(limits);
  if (needed > most) {
    // The cache is what stops a longer context from holding the message.
    return set + " The cache holds " + count_text(limits.cache_tokens) +
           " tokens: shorten the message, or give the cache and the context at least " +
           count_text(needed) + " tokens in Settings, then Retry.";
  }
  const std::string room = limits.model_tokens == most
                               ? "this model reads up to " + count_text(most) + " tokens"
                               : "the cache holds " + count_text(most) + " tokens";
  return set + " Shorten the message, or allow a longer context in Settings (" + room +
         "), then Retry.";
}

}  // namespace

ConversationBook::ConversationBook(const engine::Tokenizer& tokenizer, engine::ChatFormat format,
                                   QString model_directory)
    : tokenizer_(tokenizer),
      format_(std::move(format)),
      model_directory_(std::move(model_directory)) {}

QString ConversationBook::render_key(const QString& system_prompt) const {
  const QByteArray digest =
      QCryptographicHash::hash(system_prompt.toUtf8(), QCryptographicHash::Sha1).toHex().left(12);
  // A template's key carries its digest: an edited template renders afresh.
  return model_directory_ + u'|' + QString::fromStdString(format_.key()) + u'|' +
         QString::fromLatin1(digest);
}

engine::Message ConversationBook::engine_message(const TurnMessage& message) const {
  engine::Message converted(engine_role(message.role), utf8(message.text), message.tokens);
  converted.tool_calls = engine_calls(message.tool_calls);
  converted.tool_call_id = utf8(message.tool_call_id);
  converted.tool_name = utf8(message.tool_name);
  converted.images = prepared(message);
  return converted;
}

void ConversationBook::set_image_preparer(std::shared_ptr<engine::ImagePreparer> preparer) {
  images_ = std::move(preparer);
  prepared_.clear();
  chats_.clear();
}

std::vector<std::shared_ptr<const engine::PreparedImage>> ConversationBook::prepared(
    const TurnMessage& message) const {
  std::vector<std::shared_ptr<const engine::PreparedImage>> out;
  for (qsizetype i = 0; i < message.images.size(); ++i) {
    if (!images_) {
      throw std::invalid_argument("this model does not see images; the message's " +
                                  std::to_string(message.images.size()) + " cannot be given");
    }
    const QByteArray& bytes = message.images.at(i);
    const QByteArray key = QCryptographicHash::hash(bytes, QCryptographicHash::Sha256);
    auto found = prepared_.find(key);
    if (found == prepared_.end()) {
      try {
        found = prepared_.emplace(key, images::prepare_image_file(*images_, bytes)).first;
      } catch (const std::exception& error) {
        throw std::invalid_argument("image " + std::to_string(i + 1) +
                                    " of the message cannot be read: " + error.what());
      }
    }
    out.push_back(found->second);
  }
  return out;
}

std::vector<std::int32_t> ConversationBook::preamble(const std::string& system_prompt) const {
  return engine::Conversation(format_, tokenizer_, system_prompt).messages().front().tokens;
}

bool ConversationBook::matches(const Entry& entry, const QList<TurnMessage>& completed,
                               const QString& system_prompt,
                               const nlohmann::ordered_json& tools) const {
  if (entry.system_prompt != system_prompt || entry.conversation.awaiting_reply()) return false;
  if (entry.conversation.tools() != tools) return false;
  const std::vector<engine::Message>& messages = entry.conversation.messages();
  const std::size_t kept = entry.ids.size();
  const auto total = static_cast<std::size_t>(completed.size());
  if (kept > total || (!entry.trimmed && kept != total) || entry.head > kept) return false;
  // The kept messages must be the first `head` and the newest of the
  // history, unchanged.
  for (std::size_t i = 0; i < kept; ++i) {
    const std::size_t at = i < entry.head ? i : total - kept + i;
    const TurnMessage& stored = completed.at(static_cast<qsizetype>(at));
    if (stored.id != entry.ids[i] || utf8(stored.text) != messages[i + 1].text ||
        static_cast<std::size_t>(stored.images.size()) != messages[i + 1].images.size() ||
        static_cast<std::size_t>(stored.tool_calls.size()) != messages[i + 1].tool_calls.size()) {
      return false;
    }
  }
  return true;
}

ConversationBook::Entry ConversationBook::build(const QList<TurnMessage>& completed,
                                                const ReplyRequest& request,
                                                QList<RenderedMessage>& rendered) const {
  const std::string system = utf8(request.system_prompt);
  std::vector<qint64> ids;
  for (const TurnMessage& message : completed)
    ids.push_back(message.id);

  // The ids as stored, when they were made the way this model renders now.
  // Results are rendered again whatever they hold.
  const bool all_rendered =
      std::all_of(completed.begin(), completed.end(), [](const TurnMessage& message) {
        return message.role == store::Role::Tool || !message.tokens.empty();
      });
  if (request.render_key == render_key(request.system_prompt) && all_rendered) {
    std::vector<engine::Message> messages{{engine::Role::System, system, preamble(system)}};
    for (const TurnMessage& message : completed)
      messages.push_back(engine_message(message));
    try {
      return Entry{engine::Conversation::restore(format_, tokenizer_, std::move(messages),
                                                 tools_of(request)),
                   std::move(ids), request.system_prompt, false, 0};
    } catch (const std::invalid_argument&) {
      // Ids from another vocabulary: render the text instead.
    }
  }

  // A reply's text stands for its ids; where it made calls, the next prompt
  // finds the template's own rendering of them differs and tokenizes that.
  engine::Conversation conversation(format_, tokenizer_, system);
  conversation.set_tools(tools_of(request));
  for (qsizetype i = 0; i < completed.size(); ++i) {
    const TurnMessage& message = completed.at(i);
    if (message.role == store::Role::User) {
      conversation.begin_turn(utf8(message.text), prepared(message));
    } else if (message.role == store::Role::Tool) {
      conversation.add_tool_result(utf8(message.tool_call_id), utf8(message.tool_name),
                                   utf8(message.text));
      continue;  // the results' ids come with the reply that follows them
    } else {
      if (i > 0 && completed.at(i - 1).role == store::Role::Tool) conversation.continue_turn();
      const std::string text = utf8(message.text);
      conversation.end_turn(tokenizer_.encode(text, false), false, text,
                            engine_calls(message.tool_calls));
    }
    rendered.append({message.id, conversation.messages().back().tokens});
  }
  return Entry{std::move(conversation), std::move(ids), request.system_prompt, false, 0};
}

ConversationBook::Turn ConversationBook::begin(const ReplyRequest& request, const Limits& limits) {
  const bool continues =
      !request.history.isEmpty() && request.history.constLast().role == store::Role::Tool;
  if (request.history.isEmpty() ||
      (request.history.constLast().role != store::Role::User && !continues)) {
    throw std::invalid_argument("there is no user message or tool result to answer");
  }
  // What this turn adds: the question, or the results the reply goes on from.
  QList<TurnMessage> completed = request.history;
  QList<TurnMessage> fresh;
  do {
    fresh.prepend(completed.takeLast());
  } while (continues && !completed.isEmpty() && completed.constLast().role == store::Role::Tool);
  const nlohmann::ordered_json tools = tools_of(request);

  Turn turn;
  auto found = chats_.find(request.chat_id);
  if (found == chats_.end() || !matches(found->second, completed, request.system_prompt, tools)) {
    if (found != chats_.end()) chats_.erase(found);
    found = chats_.emplace(request.chat_id, build(completed, request, turn.rendered)).first;
  }
  Entry& entry = found->second;

  turn.context_limit = context_limit(request, limits);
  std::int64_t estimate = kMarkerAllowance;
  std::int64_t image_positions = 0;
  for (const TurnMessage& message : fresh) {
    estimate += static_cast<std::int64_t>(tokenizer_.encode(utf8(message.text), false).size());
    for (const auto& image : prepared(message)) {
      for (const auto& run : image->runs)
        image_positions += run->positions;
    }
  }
  estimate += image_positions;
  const std::int64_t reserve =
      std::min<std::int64_t>(request.max_new_tokens, turn.context_limit / 4);
  const std::int64_t room = turn.context_limit - estimate;
  if (room <= reserve) {
    throw engine::ContextOverflow(
        overflow_text(request, limits, estimate, reserve, image_positions), estimate + reserve,
        turn.context_limit);
  }
  const std::optional<engine::ContextPolicy> policy =
      engine::parse_context_policy(request.context_overflow.toStdString());
  if (!policy) {
    throw std::invalid_argument("the context policy \"" + utf8(request.context_overflow) +
                                "\" is none of " + std::string(engine::kContextPolicyChoices));
  }
  turn.reserve = reserve;
  const std::vector<engine::Message>& messages = entry.conversation.messages();
  const std::size_t before = messages.size();
  // Where each turn starts among the messages (message 0 is the system's).
  std::vector<std::size_t> starts;
  for (std::size_t i = 1; i < before; ++i) {
    if (messages[i].role == engine::Role::User) starts.push_back(i);
  }
  if (const std::optional<engine::Trimmed> trimmed =
          entry.conversation.fit(turn.context_limit, reserve, *policy, estimate)) {
    // Whole turns went: each user message with its replies, calls and results.
    const std::size_t first = starts.at(static_cast<std::size_t>(trimmed->first_turn)) - 1;
    const std::size_t dropped = std::min(entry.ids.size() - std::min(entry.ids.size(), first),
                                         before - entry.conversation.messages().size());
    const auto from = entry.ids.begin() + static_cast<std::ptrdiff_t>(first);
    entry.ids.erase(from, from + static_cast<std::ptrdiff_t>(dropped));
    entry.trimmed = true;
    entry.head = first;
    turn.trimmed = trimmed;
    // The first kept message may have been rendered again with the system
    // prompt; such ids belong to this trimmed view only, not to the store.
    turn.rendered.clear();
  }

  if (continues) {
    for (const TurnMessage& result : fresh) {
      entry.conversation.add_tool_result(utf8(result.tool_call_id), utf8(result.tool_name),
                                         utf8(result.text));
      entry.ids.push_back(result.id);
    }
    turn.prompt = entry.conversation.continue_turn();
  } else {
    turn.prompt =
        entry.conversation.begin_turn(utf8(fresh.constFirst().text), prepared(fresh.constFirst()));
    entry.ids.push_back(fresh.constFirst().id);
  }
  // The results share one run of ids, which the last of them holds.
  turn.rendered.append({fresh.constLast().id, entry.conversation.messages().back().tokens});
  turn.images = entry.conversation.image_placements();
  turn.stops = entry.conversation.stops();
  turn.tool_format = entry.conversation.tool_call_format();
  turn.max_new_tokens = static_cast<int>(std::min<std::int64_t>(
      request.max_new_tokens, turn.context_limit - entry.conversation.token_count()));
  turn.max_new_tokens = std::max(turn.max_new_tokens, 1);
  return turn;
}

ConversationBook::Closed ConversationBook::end(qint64 chat_id, qint64 reply_id,
                                               const engine::JobResult& result,
                                               const engine::tools::ParsedReply& reply) {
  Closed closed;
  closed.reply.id = reply_id;
  auto found = chats_.find(chat_id);
  if (found == chats_.end()) return closed;
  Entry& entry = found->second;
  if (result.stop_reason == engine::StopReason::Error || !entry.conversation.awaiting_reply()) {
    chats_.erase(found);
    return closed;
  }
  const bool closed_by_marker = result.stop_reason == engine::StopReason::Eos ||
                                result.stop_reason == engine::StopReason::StopToken;
  entry.conversation.end_turn(result.tokens, closed_by_marker, reply.content, reply.tool_calls);
  entry.ids.push_back(reply_id);
  closed.reply.tokens = entry.conversation.messages().back().tokens;
  closed.context_used = entry.conversation.token_count();
  closed.turns = turns_of(entry);
  return closed;
}

ContextTurns ConversationBook::turns_of(const Entry& entry) const {
  ContextTurns turns;
  const engine::ContextShape shape = entry.conversation.context_shape(1, 0);
  turns.preamble = shape.preamble;
  for (const std::int64_t tokens : shape.turns)
    turns.tokens.append(tokens);
  const std::vector<engine::Message>& messages = entry.conversation.messages();
  for (std::size_t i = 1; i < messages.size() && i - 1 < entry.ids.size(); ++i) {
    if (messages[i].role == engine::Role::User) turns.user_message_ids.append(entry.ids[i - 1]);
  }
  if (entry.trimmed && entry.head < entry.ids.size()) turns.resumes_at = entry.ids[entry.head];
  return turns;
}

}  // namespace quire::gui
