#include "katex_engine.h"

#include <QFile>
#include <QJSEngine>
#include <QJSValue>
#include <QLoggingCategory>

namespace quire::ui {
namespace {

Q_LOGGING_CATEGORY(lcKatex, "quire.math")

// KaTeX's own limit on macro expansion guards against runaway input; this one
// keeps a pasted novel from reaching the parser at all.
constexpr qsizetype kMaxTexLength = 8000;

// Called for every formula; returns [true, mathml] or [false, message].
// strict "ignore": the web peers render KaTeX's lenient inputs (unicode in
// math mode, \\ at the end) without complaint, and so do we.
constexpr auto kConvertFunction = R"JS(
(function (tex, display) {
  try {
    return [true, katex.renderToString(tex, {
      output: "mathml", throwOnError: true, displayMode: display, strict: "ignore"})];
  } catch (e) {
    return [false, String(e && e.message ? e.message : e)];
  }
})
)JS";

QLoggingCategory::CategoryFilter previousFilter = nullptr;

// QJSEngine's compiler lints every script it compiles and warns about
// KaTeX's minified code ("variable used before its declaration"): dozens of
// lines of noise about code that runs fine. Those warnings are turned off;
// every other category is left to the filter before.
void quietScriptCompiler(QLoggingCategory* category) {
  if (previousFilter) previousFilter(category);
  if (qstrcmp(category->categoryName(), "qt.qml.compiler") == 0)
    category->setEnabled(QtWarningMsg, false);
}

}  // namespace

QString KatexEngine::defaultScriptPath() {
  const QString overridden = qEnvironmentVariable("QUIRE_KATEX_JS");
  return overridden.isEmpty() ? QStringLiteral("/usr/share/javascript/katex/katex.min.js")
                              : overridden;
}

KatexEngine::KatexEngine(QString scriptPath) : scriptPath_(std::move(scriptPath)) {}

KatexEngine::~KatexEngine() = default;

bool KatexEngine::load() {
  if (loaded_) return true;
  if (!loadError_.isEmpty()) return false;
  QFile file(scriptPath_);
  if (!file.open(QIODevice::ReadOnly)) {
    loadError_ = QStringLiteral(
                     "KaTeX is not installed (%1: %2); install the libjs-katex package "
                     "to see formulas rendered")
                     .arg(scriptPath_, file.errorString());
    qCWarning(lcKatex).noquote() << loadError_;
    return false;
  }
  static const bool filtered = [] {
    previousFilter = QLoggingCategory::installFilter(quietScriptCompiler);
    return true;
  }();
  Q_UNUSED(filtered);
  engine_ = std::make_unique<QJSEngine>();
  // The script is a UMD bundle: without module or define it sets the global
  // `katex`.
  const QJSValue result = engine_->evaluate(QString::fromUtf8(file.readAll()), scriptPath_);
  const QJSValue katex = engine_->globalObject().property(QStringLiteral("katex"));
  if (result.isError() || !katex.isObject()) {
    loadError_ = QStringLiteral("KaTeX in %1 could not be loaded (%2); reinstall libjs-katex")
                     .arg(scriptPath_,
                          result.isError() ? result.toString() : QStringLiteral("no katex object"));
    qCWarning(lcKatex).noquote() << loadError_;
    engine_.reset();
    return false;
  }
  loaded_ = true;
  return true;
}

MathResult<QString> KatexEngine::toMathML(const QString& tex, bool display) {
  if (tex.size() > kMaxTexLength)
    return MathResult<QString>::failure(
        QStringLiteral("The formula is %1 characters long; formulas of more than %2 are shown "
                       "as text")
            .arg(tex.size())
            .arg(kMaxTexLength));
  if (!load()) return MathResult<QString>::failure(loadError_);
  QJSValue convert = engine_->globalObject().property(QStringLiteral("__quireToMathML"));
  if (!convert.isCallable()) {
    convert = engine_->evaluate(QString::fromUtf8(kConvertFunction));
    engine_->globalObject().setProperty(QStringLiteral("__quireToMathML"), convert);
  }
  const QJSValue answer = convert.call({QJSValue(tex), QJSValue(display)});
  if (answer.isError() || !answer.isArray())
    return MathResult<QString>::failure(QStringLiteral("KaTeX failed: %1").arg(answer.toString()));
  const QString text = answer.property(1).toString();
  if (!answer.property(0).toBool()) return MathResult<QString>::failure(text);
  // renderToString wraps the <math> element in a <span class="katex">.
  const qsizetype start = text.indexOf(QStringLiteral("<math"));
  const qsizetype end = text.lastIndexOf(QStringLiteral("</math>"));
  if (start < 0 || end < start)
    return MathResult<QString>::failure(QStringLiteral("KaTeX returned no MathML"));
  return text.sliced(start, end + 7 - start);
}

}  // namespace quire::ui
