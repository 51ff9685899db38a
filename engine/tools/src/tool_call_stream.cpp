#include <stdexcept>
#include <utility>

#include "family.h"
#include "json_scan.h"
#include "quire/engine/tools/tool_call_parser.h"

namespace quire::engine::tools {

namespace {

std::unique_ptr<const detail::Family> make_family(ToolCallFormat format) {
  switch (format) {
    case ToolCallFormat::None:
      return nullptr;
    case ToolCallFormat::Hermes:
      return detail::make_hermes_family();
    case ToolCallFormat::Llama3:
      return detail::make_llama3_family();
    case ToolCallFormat::Mistral:
      return detail::make_mistral_family();
    case ToolCallFormat::Harmony:
      return detail::make_harmony_family();
    case ToolCallFormat::DeepSeekV3:
      return detail::make_deepseek_family();
  }
  return nullptr;
}

// The length of text's longest prefix that does not end inside a UTF-8
// sequence, so that no delta carries half a character.
std::size_t utf8_whole(std::string_view text) {
  std::size_t i = text.size();
  std::size_t back = 0;
  while (i > 0 && back < 4) {
    const auto byte = static_cast<unsigned char>(text[i - 1]);
    if ((byte & 0xC0) != 0x80) {
      std::size_t need = 1;
      if ((byte & 0xE0) == 0xC0) {
        need = 2;
      } else if ((byte & 0xF0) == 0xE0) {
        need = 3;
      } else if ((byte & 0xF8) == 0xF0) {
        need = 4;
      }
      return back + 1 >= need ? text.size() : i - 1;
    }
    --i;
    ++back;
  }
  return text.size();
}

void add_call_delta(StreamDelta& out, std::size_t index, std::string id, std::string name,
                    std::string_view fragment) {
  if (out.tool_calls.empty() || out.tool_calls.back().index != index) {
    ToolCallDelta fresh;
    fresh.index = index;
    out.tool_calls.push_back(std::move(fresh));
  }
  ToolCallDelta& delta = out.tool_calls.back();
  if (!id.empty()) delta.id = std::move(id);
  if (!name.empty()) delta.name = std::move(name);
  delta.arguments += fragment;
}

}  // namespace

ToolCallStream::ToolCallStream(ToolCallFormat format, CallIdSource ids, StreamOptions options)
    : ids_(std::move(ids)), options_(options), family_(make_family(format)) {
  if (!ids_) ids_ = [format] { return new_call_id(format); };
}

ToolCallStream::~ToolCallStream() = default;
ToolCallStream::ToolCallStream(ToolCallStream&&) noexcept = default;
ToolCallStream& ToolCallStream::operator=(ToolCallStream&&) noexcept = default;

StreamDelta ToolCallStream::feed(std::string_view text) {
  if (finished_) throw std::logic_error("ToolCallStream: text fed after finish()");
  text_ += text;
  StreamDelta out;
  advance(false, out);
  return out;
}

StreamDelta ToolCallStream::finish() {
  if (finished_) throw std::logic_error("ToolCallStream: finish() called twice");
  StreamDelta out;
  advance(true, out);
  finished_ = true;
  if (reply_.broken) {
    // Plain text, as generated: no call is half kept.
    reply_.content = text_;
    reply_.reasoning.clear();
    reply_.tool_calls.clear();
  }
  return out;
}

void ToolCallStream::advance(bool at_end, StreamDelta& out) {
  while (in_section_ ? scan_section(at_end, out) : scan_text(at_end, out)) {
  }
}

void ToolCallStream::emit_content(std::string_view text, StreamDelta& out) {
  if (text.empty()) return;
  if (to_reasoning_ && !passthrough_) {
    out.reasoning += text;
    reply_.reasoning += text;
  } else {
    out.content += text;
    reply_.content += text;
  }
  after_section_ = false;
}

bool ToolCallStream::scan_text(bool at_end, StreamDelta& out) {
  std::string_view rest = std::string_view(text_).substr(pos_);
  if (rest.empty()) return false;
  if (!family_ || passthrough_) {
    const std::size_t take = at_end ? rest.size() : utf8_whole(rest);
    emit_content(rest.substr(0, take), out);
    pos_ += take;
    return false;
  }
  if (after_section_) {
    // Space between sections, or after the last one, is layout, not content.
    const std::size_t space = detail::skip_space(rest, 0);
    pos_ += space;
    rest.remove_prefix(space);
    if (rest.empty()) return false;
  }
  const bool reply_start = reply_.content.empty() && reply_.reasoning.empty() && !any_section_;
  const detail::StartSearch search = family_->find_start(rest, reply_start, after_section_);
  if (search.start != detail::StartSearch::none) {
    // Space right before a section is dropped with it, unless it breaks off.
    const std::string_view before = detail::trim_space_right(rest.substr(0, search.start));
    emit_content(before, out);
    dropped_space_ = std::string(rest.substr(before.size(), search.start - before.size()));
    pos_ += search.start;
    in_section_ = true;
    announced_.clear();
    return true;
  }
  std::string_view safe = rest.substr(0, at_end ? rest.size() : search.safe);
  // Trailing space waits: a section may follow it. At the end it is content
  // unless the reply made calls.
  if (!at_end || !reply_.tool_calls.empty()) safe = detail::trim_space_right(safe);
  if (!at_end) safe = safe.substr(0, utf8_whole(safe));
  emit_content(safe, out);
  pos_ += safe.size();
  if (at_end) pos_ = text_.size();
  return false;
}

bool ToolCallStream::scan_section(bool at_end, StreamDelta& out) {
  const std::string_view rest = std::string_view(text_).substr(pos_);
  detail::SectionScan scan = family_->scan(rest, at_end);
  if (scan.status == detail::ScanStatus::Invalid) {
    break_off(scan.error, out);
    return true;
  }
  if (scan.status == detail::ScanStatus::NotASection) {
    in_section_ = false;
    emit_content(rest.substr(0, scan.end), out);
    pos_ += scan.end;
    return true;
  }
  if (scan.status == detail::ScanStatus::Incomplete && at_end) {
    break_off("generation ended inside a tool call", out);
    return true;
  }
  const bool complete = scan.status == detail::ScanStatus::Complete;
  if (options_.whole_calls && !complete) return false;
  const std::size_t base = reply_.tool_calls.size();
  for (std::size_t k = 0; k < scan.calls.size(); ++k) {
    const detail::ScannedCall& call = scan.calls[k];
    if (k == announced_.size()) {
      if (!call.name_done) break;
      announced_.push_back({ids_(), call.name, 0});
      add_call_delta(out, base + k, announced_[k].id, call.name, {});
    }
    Announced& sent = announced_[k];
    std::string_view fragment = std::string_view(call.arguments).substr(sent.arguments_sent);
    if (!call.arguments_done) fragment = fragment.substr(0, utf8_whole(fragment));
    if (!fragment.empty()) add_call_delta(out, base + k, {}, {}, fragment);
    sent.arguments_sent += fragment.size();
  }
  if (!complete) return false;
  for (std::size_t k = 0; k < scan.calls.size(); ++k)
    reply_.tool_calls.push_back({announced_[k].id, scan.calls[k].name, scan.calls[k].arguments});
  announced_.clear();
  pos_ += scan.end;
  in_section_ = false;
  after_section_ = true;
  any_section_ = true;
  to_reasoning_ = scan.route_after == detail::Route::Reasoning;
  return true;
}

void ToolCallStream::break_off(std::string reason, StreamDelta& out) {
  reply_.broken = true;
  reply_.broken_reason = std::move(reason);
  passthrough_ = true;
  in_section_ = false;
  announced_.clear();
  // The rest, from the broken section on, is sent as text (scan_text),
  // after the space that came before it.
  emit_content(std::exchange(dropped_space_, {}), out);
}

ParsedReply parse_tool_calls(ToolCallFormat format, std::string_view text, CallIdSource ids) {
  ToolCallStream stream(format, std::move(ids));
  stream.feed(text);
  stream.finish();
  return stream.reply();
}

}  // namespace quire::engine::tools
