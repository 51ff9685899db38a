// A chat's tree cut into branches for reading, as chat_export.h describes.

#include <QHash>
#include <QSet>
#include <utility>

#include "quire/app/store/chat_export.h"

namespace quire::store {

QList<ChatBranch> chat_branches(const ChatDocument& document) {
  QList<Message> path = current_path(document);
  if (path.isEmpty()) return {};
  // A document without ids is one branch already.
  const bool tree = raw(path.front().id) != 0;
  if (!tree) return {ChatBranch{QStringLiteral("1"), QString(), 0, path}};

  QHash<qint64, QList<const Message*>> children;  // by parent id; 0: first messages
  for (const Message& message : document.messages)
    children[message.parent ? raw(*message.parent) : 0].append(&message);

  struct Pending {
    const Message* start;
    QString label;
    QString parent_label;
    int depth;
  };
  QList<ChatBranch> branches;
  // Depth first without recursion: a branch's own branches are pushed in
  // reverse so that they come out in order.
  std::vector<Pending> stack;
  const auto walk = [&](const Pending& pending, const QList<Message>& given) {
    ChatBranch branch{pending.label, pending.parent_label, pending.depth, {}};
    std::vector<Pending> forks;
    const auto fork_from = [&](qint64 parent, qint64 taken) {
      for (const Message* child : children.value(parent)) {
        if (raw(child->id) == taken) continue;
        forks.push_back(Pending{child,
                                QStringLiteral("%1.%2").arg(pending.label).arg(forks.size() + 1),
                                pending.label, pending.depth + 1});
      }
    };
    if (!given.isEmpty()) {
      fork_from(0, raw(given.front().id));
      for (qsizetype i = 0; i < given.size(); ++i) {
        branch.messages << given[i];
        const qint64 next = i + 1 < given.size() ? raw(given[i + 1].id) : -1;
        fork_from(raw(given[i].id), next);
      }
    } else {
      const Message* message = pending.start;
      while (message != nullptr) {
        branch.messages << *message;
        const QList<const Message*> kids = children.value(raw(message->id));
        const Message* next = kids.isEmpty() ? nullptr : kids.back();
        fork_from(raw(message->id), next ? raw(next->id) : -1);
        message = next;
      }
    }
    branches << branch;
    for (auto fork = forks.rbegin(); fork != forks.rend(); ++fork)
      stack.push_back(*fork);
  };
  walk(Pending{nullptr, QStringLiteral("1"), QString(), 0}, path);
  while (!stack.empty()) {
    const Pending pending = stack.back();
    stack.pop_back();
    walk(pending, {});
  }
  return branches;
}

}  // namespace quire::store
