// Which edits a running model takes live and which need it reloaded, plus the
// small vocabularies (split ids) the settings are written in.

#include <QTest>
#include <array>

#include "quire/ui/settings_data.h"
#include "quire/ui/settings_limits.h"
#include "settings_fixtures.h"
#include "test_main.h"

using quire::ui::ApplyEffect;
using quire::ui::EngineSettings;

namespace {

struct ChangeCase {
  const char* name;
  void (*change)(EngineSettings& applied, EngineSettings& edited);
  ApplyEffect effect;
  const char* reason;  // the one reload reason expected, or "" for none
};

using Split = EngineSettings::Split;

const std::array<ChangeCase, 26> kCases = {{
    {"nothing", [](EngineSettings&, EngineSettings&) {}, ApplyEffect::None, ""},
    {"model", [](EngineSettings&, EngineSettings& e) { e.model_directory = "/models/b"; },
     ApplyEffect::Reload, "model"},
    {"backend", [](EngineSettings&, EngineSettings& e) { e.backend = "cpu"; }, ApplyEffect::Reload,
     "backend"},
    {"devices",
     [](EngineSettings&, EngineSettings& e) {
       e.devices = {0, 1};
     },
     ApplyEffect::Reload, "devices"},
    {"split mode", [](EngineSettings&, EngineSettings& e) { e.split = Split::Balanced; },
     ApplyEffect::Reload, "split"},
    {"manual GB in manual mode",
     [](EngineSettings&, EngineSettings& e) {
       e.manual_gb = {4, 8};
     },
     ApplyEffect::Reload, "split"},
    {"manual GB in fill mode",
     [](EngineSettings& a, EngineSettings& e) {
       a.split = e.split = Split::Fill;
       e.manual_gb = {4, 8};
     },
     ApplyEffect::Live, ""},
    {"leaving manual mode",
     [](EngineSettings&, EngineSettings& e) {
       e.split = Split::Fill;
       e.manual_gb.clear();
     },
     ApplyEffect::Reload, "split"},
    {"reserve", [](EngineSettings&, EngineSettings& e) { e.reserve_mib = 1024; },
     ApplyEffect::Reload, "reserve"},
    {"cache format", [](EngineSettings&, EngineSettings& e) { e.cache_format = "fp8"; },
     ApplyEffect::Reload, "cache format"},
    {"cache size", [](EngineSettings&, EngineSettings& e) { e.cache_tokens = 131072; },
     ApplyEffect::Reload, "cache size"},
    {"host cache", [](EngineSettings&, EngineSettings& e) { e.host_cache_mib = 0; },
     ApplyEffect::Reload, "host cache"},
    {"residual window", [](EngineSettings&, EngineSettings& e) { e.residual_window = 0; },
     ApplyEffect::Reload, "residual window"},
    {"cache residence", [](EngineSettings&, EngineSettings& e) { e.cache_residence = "offloaded"; },
     ApplyEffect::Reload, "cache residence"},
    {"cache device", [](EngineSettings&, EngineSettings& e) { e.cache_device = 0; },
     ApplyEffect::Reload, "cache device"},
    {"max batch", [](EngineSettings&, EngineSettings& e) { e.max_batch = 4; }, ApplyEffect::Reload,
     "batch size"},
    {"chunk size", [](EngineSettings&, EngineSettings& e) { e.chunk_size = 2048; },
     ApplyEffect::Reload, "chunk size"},
    {"max context", [](EngineSettings&, EngineSettings& e) { e.max_context = 4096; },
     ApplyEffect::Live, ""},
    {"recent models", [](EngineSettings&, EngineSettings& e) { e.recent_models.clear(); },
     ApplyEffect::Live, ""},
    {"temperature", [](EngineSettings&, EngineSettings& e) { e.sampling.temperature = 1.2; },
     ApplyEffect::Live, ""},
    {"top-p", [](EngineSettings&, EngineSettings& e) { e.sampling.top_p = 0.5; }, ApplyEffect::Live,
     ""},
    {"min-p", [](EngineSettings&, EngineSettings& e) { e.sampling.min_p = 0; }, ApplyEffect::Live,
     ""},
    {"repetition penalty",
     [](EngineSettings&, EngineSettings& e) { e.sampling.repetition_penalty = 1.0; },
     ApplyEffect::Live, ""},
    {"top-k", [](EngineSettings&, EngineSettings& e) { e.sampling.top_k = 0; }, ApplyEffect::Live,
     ""},
    {"system prompt", [](EngineSettings&, EngineSettings& e) { e.system_prompt = "Be kind."; },
     ApplyEffect::Live, ""},
    {"prompt format", [](EngineSettings&, EngineSettings& e) { e.prompt_format = "auto"; },
     ApplyEffect::Live, ""},
}};

}  // namespace

class TestSettingsChanges : public QObject {
  Q_OBJECT

 private slots:
  void applyEffect_data() {
    QTest::addColumn<int>("index");
    for (std::size_t i = 0; i < kCases.size(); ++i) {
      QTest::newRow(kCases[i].name) << static_cast<int>(i);
    }
  }

  void applyEffect() {
    QFETCH(int, index);
    const ChangeCase& c = kCases.at(static_cast<std::size_t>(index));
    EngineSettings applied = quire::ui::test::sample_settings(QStringLiteral("/models/a"));
    EngineSettings edited = applied;
    c.change(applied, edited);

    QCOMPARE(quire::ui::apply_effect(applied, edited), c.effect);
    QCOMPARE(quire::ui::needs_reload(applied, edited), c.effect == ApplyEffect::Reload);
    const QStringList expected =
        QString::fromUtf8(c.reason).isEmpty() ? QStringList() : QStringList{c.reason};
    QCOMPARE(quire::ui::reload_reasons(applied, edited), expected);
    // Equality sees every change the table lists.
    QCOMPARE(applied == edited, c.effect == ApplyEffect::None);
  }

  void reasonsAreListedInFieldOrder() {
    const EngineSettings applied = quire::ui::test::sample_settings(QStringLiteral("/m"));
    EngineSettings edited = applied;
    edited.cache_format = QStringLiteral("q8");
    edited.reserve_mib = 128;
    edited.sampling.temperature = 0.1;
    QCOMPARE(quire::ui::reload_reasons(applied, edited),
             (QStringList{QStringLiteral("reserve"), QStringLiteral("cache format")}));
  }

  void splitIds() {
    for (Split split : {Split::Fill, Split::Balanced, Split::Manual}) {
      bool ok = false;
      QCOMPARE(quire::ui::parse_split(quire::ui::split_id(split), &ok), split);
      QVERIFY(ok);
    }
    bool ok = true;
    QCOMPARE(quire::ui::parse_split(QStringLiteral("layer"), &ok), Split::Fill);
    QVERIFY(!ok);
  }
};

QUIRE_TEST(TestSettingsChanges)
#include "test_settings_changes.moc"
