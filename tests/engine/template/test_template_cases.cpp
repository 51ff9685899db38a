// Every construct, filter, test and method on a table of snippets whose
// expected outputs are what Python's jinja2 renders (make_cases.py writes the
// table with tests/reference/render_chat_template.py).

#include <QFile>
#include <QTest>

#include "template_test_support.h"
#include "test_main.h"

namespace {

quire::test::OrderedJson load_cases() {
  QFile file(QStringLiteral(QUIRE_TEMPLATE_CASES));
  if (!file.open(QIODevice::ReadOnly)) return {};
  return quire::test::OrderedJson::parse(file.readAll().toStdString());
}

}  // namespace

class TemplateCasesTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    table_ = load_cases();
    QVERIFY2(table_.contains("cases"), "tests/engine/template/template_cases.json is missing");
    QVERIFY(table_["cases"].size() > 100);
  }

  void rendersAsPython_data() {
    QTest::addColumn<int>("row");
    const auto& cases = table_["cases"];
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const std::string tpl = cases[i]["template"].get<std::string>();
      QTest::addRow("%zu: %s", i, tpl.substr(0, 60).c_str()) << static_cast<int>(i);
    }
  }

  void rendersAsPython() {
    QFETCH(int, row);
    const auto& entry = table_["cases"][static_cast<std::size_t>(row)];
    const std::string actual =
        quire::test::render_or_error(entry["template"].get<std::string>(), entry["context"],
                                     quire::test::options_at(table_["now"].get<std::string>()));
    if (entry.contains("error")) {
      const std::string why =
          "Python raises \"" + entry["error"].get<std::string>() + "\", this renders: " + actual;
      QVERIFY2(actual.rfind("ERROR: ", 0) == 0, why.c_str());
    } else {
      QCOMPARE(QString::fromStdString(actual),
               QString::fromStdString(entry["expected"].get<std::string>()));
    }
  }

  // The table's expectations are Python's own: render them again with it.
  void tableIsWhatPythonRenders() {
    quire::test::OrderedJson requests = quire::test::OrderedJson::array();
    for (const auto& entry : table_["cases"])
      requests.push_back(
          {{"template", entry["template"]}, {"context", entry["context"]}, {"now", table_["now"]}});
    QString problem;
    const auto results = quire::test::render_with_python(requests, problem);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QCOMPARE(results.size(), requests.size());
    for (std::size_t i = 0; i < results.size(); ++i) {
      const auto& entry = table_["cases"][i];
      QCOMPARE(results[i]["ok"].get<bool>(), !entry.contains("error"));
      if (!entry.contains("error"))
        QCOMPARE(results[i]["text"].get<std::string>(), entry["expected"].get<std::string>());
    }
  }

 private:
  quire::test::OrderedJson table_;
};

QUIRE_TEST(TemplateCasesTest)
#include "test_template_cases.moc"
