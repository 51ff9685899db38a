#include "quire/tools/tool_servers.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>

#include "quire/tools/mcp_protocol.h"

namespace quire::tools {

QJsonObject ToolFunction::definition() const {
  QString description = tool.description;
  if (description.isEmpty()) description = tool.title;
  QJsonObject parameters = tool.input_schema;
  if (parameters.isEmpty()) parameters.insert(QStringLiteral("type"), QStringLiteral("object"));
  QJsonObject function{{QStringLiteral("name"), function_name},
                       {QStringLiteral("description"), description},
                       {QStringLiteral("parameters"), parameters}};
  return QJsonObject{{QStringLiteral("type"), QStringLiteral("function")},
                     {QStringLiteral("function"), function}};
}

ToolServers::ToolServers(QObject* parent) : QObject(parent) {}

ToolServers::~ToolServers() {
  for (McpClient* client : clients_) {
    client->disconnect(this);
    delete client;
  }
}

McpClient* ToolServers::makeClient(const ToolServerConfig& config) {
  auto* client = new McpClient(config, this);
  const QString name = config.name;
  connect(client, &McpClient::stateChanged, this, [this, client, name](McpClient::State state) {
    if (state != McpClient::State::Ready) rebuildFunctions();
    emit serverStateChanged(name, state,
                            state == McpClient::State::Failed ? client->errorString() : QString());
  });
  connect(client, &McpClient::toolsChanged, this, &ToolServers::rebuildFunctions);
  return client;
}

namespace {

// Ends a client's connection as the specification says, then deletes it.
void retire(McpClient* client) {
  QObject::connect(client, &McpClient::stopped, client, &QObject::deleteLater);
  client->stop();
  if (client->state() == McpClient::State::Stopped) client->deleteLater();
}

}  // namespace

QStringList ToolServers::setServers(const QList<ToolServerConfig>& servers) {
  const QStringList problems = validate_tool_servers(servers);
  if (!problems.isEmpty()) return problems;
  QList<McpClient*> old = clients_;
  QList<McpClient*> clients;
  QList<McpClient*> restart;
  for (const ToolServerConfig& config : servers) {
    McpClient* kept = nullptr;
    for (McpClient*& previous : old) {
      if (previous == nullptr || previous->config().name != config.name) continue;
      if (previous->config() == config) {
        kept = previous;
      } else {
        const McpClient::State state = previous->state();
        const bool was_running =
            state == McpClient::State::Connecting || state == McpClient::State::Ready;
        previous->disconnect(this);
        retire(previous);
        kept = makeClient(config);
        if (was_running && config.enabled) restart.append(kept);
      }
      previous = nullptr;
      break;
    }
    clients.append(kept != nullptr ? kept : makeClient(config));
  }
  for (McpClient* gone : old) {
    if (gone == nullptr) continue;
    gone->disconnect(this);
    retire(gone);
    emit serverStateChanged(gone->name(), McpClient::State::Stopped, {});
  }
  configs_ = servers;
  clients_ = clients;
  rebuildFunctions();
  for (McpClient* client : restart)
    client->start();
  return {};
}

void ToolServers::startEnabled() {
  for (McpClient* client : clients_) {
    if (client->config().enabled) client->start();
  }
}

bool ToolServers::start(const QString& server) {
  McpClient* found = client(server);
  if (found == nullptr) return false;
  found->start();
  return true;
}

bool ToolServers::stop(const QString& server) {
  McpClient* found = client(server);
  if (found == nullptr) return false;
  found->stop();
  return true;
}

void ToolServers::stopAll() {
  for (McpClient* client : clients_)
    client->stop();
}

McpClient* ToolServers::client(const QString& server) const {
  for (McpClient* client : clients_) {
    if (client->name() == server) return client;
  }
  return nullptr;
}

McpClient::State ToolServers::state(const QString& server) const {
  McpClient* found = client(server);
  return found != nullptr ? found->state() : McpClient::State::Stopped;
}

QString ToolServers::errorString(const QString& server) const {
  McpClient* found = client(server);
  return found != nullptr ? found->errorString() : QString();
}

void ToolServers::rebuildFunctions() {
  QList<ToolFunction> functions;
  std::vector<std::pair<std::string, std::string>> names;
  for (McpClient* client : clients_) {
    if (client->state() != McpClient::State::Ready) continue;
    for (const McpTool& tool : client->tools()) {
      ToolFunction function;
      function.server = client->name();
      function.tool = tool;
      functions.append(function);
      names.emplace_back(client->name().toStdString(), tool.name.toStdString());
    }
  }
  const std::vector<std::string> unique = unique_function_names(names);
  for (qsizetype i = 0; i < functions.size(); ++i) {
    functions[i].function_name = QString::fromStdString(unique[static_cast<std::size_t>(i)]);
  }
  bool same = functions.size() == functions_.size();
  for (qsizetype i = 0; same && i < functions.size(); ++i) {
    same = functions[i].function_name == functions_[i].function_name &&
           functions[i].server == functions_[i].server && functions[i].tool == functions_[i].tool;
  }
  if (same) return;
  functions_ = functions;
  emit toolsChanged();
}

QJsonArray ToolServers::functionDefinitions() const {
  QJsonArray array;
  for (const ToolFunction& function : functions_)
    array.append(function.definition());
  return array;
}

std::optional<ToolFunction> ToolServers::function(const QString& function_name) const {
  for (const ToolFunction& function : functions_) {
    if (function.function_name == function_name) return function;
  }
  return std::nullopt;
}

ToolCall* ToolServers::call(const QString& function_name, const QString& arguments_json) {
  const std::optional<ToolFunction> found = function(function_name);
  QJsonObject arguments;
  QString problem;
  if (!found) {
    problem = QStringLiteral("There is no tool \"%1\".").arg(function_name);
  } else if (!arguments_json.trimmed().isEmpty()) {
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(arguments_json.toUtf8(), &error);
    if (error.error != QJsonParseError::NoError) {
      problem = QStringLiteral("The arguments of \"%1\" are not JSON: %2 at offset %3.")
                    .arg(function_name, error.errorString())
                    .arg(error.offset);
    } else if (!document.isObject()) {
      problem = QStringLiteral("The arguments of \"%1\" are not a JSON object.").arg(function_name);
    } else {
      arguments = document.object();
    }
  }
  if (!problem.isEmpty()) {
    auto* call = new ToolCall(found ? found->server : QString(),
                              found ? found->tool.name : function_name, arguments);
    call->function_name_ = function_name;
    ToolCallResult result;
    result.outcome = ToolCallOutcome::Failed;
    result.error = problem;
    result.text = problem;
    result.summary = QStringLiteral("Failed: ") + problem;
    call->finishLater(result);
    return call;
  }
  McpClient* owner = client(found->server);
  ToolCall* call = owner->callTool(found->tool.name, arguments);
  call->function_name_ = function_name;
  return call;
}

}  // namespace quire::tools
