#pragma once

// What the GUI thread and the engine worker send each other. Plain values
// only: they cross threads inside queued signals, so nothing here points into
// the engine or into a widget.

#include <QByteArray>
#include <QList>
#include <QMap>
#include <QMetaType>
#include <QString>
#include <QStringList>
#include <QtGlobal>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "quire/app/store/chat_types.h"
#include "quire/ui/server_settings.h"
#include "quire/ui/settings_data.h"

namespace quire::engine::disk_cache {
class PageFileOps;
}

namespace quire::gui {

// The device lists each backend is started over; the settings then choose
// devices of the chosen backend's list by index. See backend_choice.h.
struct DeviceLists {
  // "cpu", or budgeted logical devices such as "cpu:2x512MiB".
  QString cpu = QStringLiteral("cpu");
  // "cuda" (every GPU), or chosen GPUs and budgeted shares such as
  // "cuda:0:2x20GiB" (kernels/common/include/quire/kernels/cuda_devices.h).
  QString cuda = QStringLiteral("cuda");
};

// The cache's disk tier as the settings want it (Settings → Disk cache).
struct DiskCacheRequest {
  // The disk cache's root, every model's folders in it; empty: none.
  QString root;
  bool enabled = false;
  qint64 limit_bytes = 0;  // for every model's pages together
  // The calls that write page files; null: the system's. Tests make them
  // fail as a full disk would (ApplicationOptions::disk_file_ops, which
  // keeps them alive while the application lives).
  std::shared_ptr<engine::disk_cache::PageFileOps> file_ops;

  friend bool operator==(const DiskCacheRequest&, const DiskCacheRequest&) = default;
};

// Load (or reload) a model with these settings.
struct LoadRequest {
  quint64 id = 0;  // echoed in every answer, so a stale answer is recognised
  ui::EngineSettings settings;
  DeviceLists devices;
  DiskCacheRequest disk_cache;
  // Set from the GUI thread to stop the load between two tensors: a queued
  // call could not reach the worker while it is busy reading weights.
  std::shared_ptr<std::atomic<bool>> cancel;
};

// A loaded model, described for the status line and the window title.
struct ModelInfo {
  QString directory;
  QString name;     // the folder's name
  QString backend;  // "cpu" or "cuda"
  // Why the backend is not the one the settings prefer ("auto" found no
  // usable CUDA backend); empty when it is.
  QString backend_note;
  QStringList devices;        // the devices holding part of the model
  QString cache_format;       // "FP16", "Q4", ...
  qint64 cache_tokens = 0;    // the shared cache, in tokens
  qint64 context_tokens = 0;  // what one conversation may hold
  // context_tokens is the model's max_position_embeddings, not a setting or the cache.
  bool context_is_model_limit = false;
  QString prompt_format;  // "template", "chatml", ...
  // For people: "the model's chat template (tokenizer_config.json)", "Llama 3 ...".
  QString prompt_format_title;
  // Why the model's own chat template is not used (it names the problem and
  // the built-in format used instead); empty when all is well.
  QString format_notice;
  // The draft model loaded beside it (its folder), or why the one chosen
  // was not: replies then decode without its drafts.
  QString draft_model;
  QString draft_notice;
  // The disk tier's folder name for this model (its identity in hex) while
  // the tier is open; else why it could not be opened (empty when it was,
  // or is off). A model the tier cannot keep yet is said as information,
  // a folder that cannot be used as an error.
  QString disk_identity;
  QString disk_notice;
  bool disk_notice_is_error = false;
  qint64 parameters = 0;
  // Identifies how messages are turned into token ids (model, prompt format,
  // system prompt). Token ids stored under another key are rendered afresh.
  QString render_key;
  // The directory holds a vision tower and projector the engine can run
  // beside the language model (its plan finds room for it in host memory).
  // Whether images reach the model also takes the generator's support:
  // model_sees_images() (image_support.h) decides.
  bool has_vision = false;
  // The tower's name ("SigLIP tower, Gemma 3 projector"); empty for none.
  QString vision_tower;
  // Why the tower config.json declares cannot be used (a damaged download,
  // too little host memory); empty when it can, or there is none.
  QString vision_problem;
};

// Why something failed, for people: a headline, what happened, what to do.
struct EngineFailure {
  enum class Kind { NoModel, DoesNotFit, CorruptFiles, OutOfMemory, Cancelled, Busy, Other };
  Kind kind = Kind::Other;
  QString title;
  QString detail;
  QString advice;

  // "title: detail. advice", one paragraph of sentences.
  QString text() const;
  // Appends a sentence to the advice.
  void addAdvice(const QString& sentence);
};

// One message of a conversation as the store keeps it.
struct TurnMessage {
  qint64 id = 0;  // the store's message id
  store::Role role = store::Role::User;
  QString text;
  std::vector<std::int32_t> tokens;  // empty when never rendered or stale
  // A reply's tool calls (its text is the content around them); a Tool
  // message's call id and tool name (its text is the result).
  QList<store::ToolCall> tool_calls;
  QString tool_call_id;
  QString tool_name;
  // A user message's image files, shown before its text; empty where the
  // model does not see images (model_sees_images), so the text goes alone.
  QList<QByteArray> images = {};
};

// Generate the reply to the last user message of `history`.
struct ReplyRequest {
  qint64 reply_id = 0;  // the store's id of the (empty) assistant message
  qint64 chat_id = 0;
  QString chat_title;  // shown in the page map's tooltips
  // Every message so far: user messages and replies in turn, a reply that
  // called tools followed by their results; ending with the user message
  // being answered, or with the results the reply goes on from.
  QList<TurnMessage> history;
  // The tools the model may call: OpenAI's list of function definitions as
  // JSON text; empty for none.
  QByteArray tools;
  // Added to the logits of these token ids, for every token of the reply.
  QMap<qint32, double> token_bias;
  // The chat's biases by text: added to every token of each text as the
  // loaded model's tokenizer spells it (the engine resolves them).
  QMap<QString, double> logit_bias_text;
  // Text the reply must never show (the chat's banned strings).
  QStringList banned_strings;
  // The render key the history's token ids were made under.
  QString render_key;
  ui::SamplingDefaults sampling;
  ui::DraftDefaults drafts;
  QString system_prompt;
  QString prompt_format;   // "auto" or a format's name
  qint64 max_context = 0;  // tokens; 0: the whole cache
  int max_new_tokens = 1024;
  // What to do when the chat outgrows the context: "stop", "drop_oldest" or
  // "truncate_middle" (engine::parse_context_policy's names).
  QString context_overflow = QStringLiteral("drop_oldest");
};

// The conversation the engine holds for a chat, as token counts: what the
// window's context gauge asks engine::plan_context() about the next turn.
struct ContextTurns {
  qint64 preamble = 0;             // the system prompt's tokens
  QList<qint64> tokens;            // each turn's, oldest first
  QList<qint64> user_message_ids;  // the store id of each turn's user message
  // The store id of the first message after turns a context policy dropped
  // (the view marks it); 0 while nothing was dropped.
  qint64 resumes_at = 0;
};

// The token ids a message was rendered to, for the store.
struct RenderedMessage {
  qint64 id = 0;
  std::vector<std::int32_t> tokens;
};

// How a reply went.
struct ReplyOutcome {
  qint64 reply_id = 0;
  qint64 chat_id = 0;
  QString text;
  store::GenerationStats stats;
  // The failure when stats.stop_reason is "error".
  QString error;
  // The tool calls the reply made (`text` is then the content around them).
  QList<store::ToolCall> tool_calls;
  // Why a call the reply began is not one (it broke off); empty when none did.
  QString tool_call_error;
  // Token ids worth storing: the reply's and the messages rendered for it.
  QList<RenderedMessage> rendered;
  QString render_key;
  int trimmed_turns = 0;         // turns left out to fit the context for this reply
  int trimmed_first_turn = 0;    // of the conversation the engine held, from 0
  qint64 trimmed_tokens = 0;     // how much shorter the prompt became
  qint64 recomputed_tokens = 0;  // of the shortened prompt, what the cache could not serve
  QString context_overflow;      // the policy that applied
  qint64 context_used = 0;       // tokens of the conversation after the reply
  qint64 context_limit = 0;
  qint64 context_reserve = 0;  // kept for a reply when fitting the context
  ContextTurns context_turns;
};

void register_engine_message_types();

}  // namespace quire::gui

Q_DECLARE_METATYPE(quire::gui::DiskCacheRequest)
Q_DECLARE_METATYPE(quire::gui::LoadRequest)
Q_DECLARE_METATYPE(quire::gui::ModelInfo)
Q_DECLARE_METATYPE(quire::gui::EngineFailure)
Q_DECLARE_METATYPE(quire::gui::ReplyRequest)
Q_DECLARE_METATYPE(quire::gui::ReplyOutcome)
