// The Hub's answers and headers as quire_hub_protocol reads them, the
// environment's settings and the include/exclude filter; no network.

#include <QTemporaryDir>
#include <QTest>
#include <fstream>
#include <map>

#include "quire/hub/file_filter.h"
#include "quire/hub/hub_environment.h"
#include "quire/hub/hub_error.h"
#include "quire/hub/hub_headers.h"
#include "quire/hub/hub_models.h"
#include "test_main.h"

using namespace quire::hub;

namespace {

HeaderLookup headers_of(std::map<std::string, std::string> values) {
  return [values](std::string_view name) -> std::optional<std::string> {
    const auto found = values.find(std::string(name));
    if (found == values.end()) return std::nullopt;
    return found->second;
  };
}

EnvironmentLookup environment_of(std::map<std::string, std::string> values) {
  return [values](const char* name) -> std::optional<std::string> {
    const auto found = values.find(name);
    if (found == values.end()) return std::nullopt;
    return found->second;
  };
}

const std::string kSha256(64, 'c');

}  // namespace

class HubProtocolTest : public QObject {
  Q_OBJECT

 private slots:
  void readsSearchResults() {
    const auto models = parse_model_list(
        R"([{"_id":"65f","id":"turboderp/Llama-3-8B-exl2","author":"turboderp","downloads":42,
             "likes":7,"lastModified":"2024-05-01T00:00:00.000Z","tags":["exl2","llama"],
             "pipeline_tag":"text-generation","gated":false,"private":false},
            {"modelId":"org/gated","gated":"manual","library_name":"transformers"}])");
    QCOMPARE(models.size(), 2u);
    QCOMPARE(models[0].id, std::string("turboderp/Llama-3-8B-exl2"));
    QCOMPARE(models[0].downloads, 42);
    QCOMPARE(models[0].likes, 7);
    QCOMPARE(models[0].tags, (std::vector<std::string>{"exl2", "llama"}));
    QCOMPARE(models[0].gated, std::string());
    QCOMPARE(models[1].id, std::string("org/gated"));
    QCOMPARE(models[1].gated, std::string("manual"));
    QCOMPARE(models[1].library_name, std::string("transformers"));
  }

  void refusesMalformedAnswers_data() {
    QTest::addColumn<QByteArray>("answer");
    QTest::newRow("not json") << QByteArray("<html>");
    QTest::newRow("object, not list") << QByteArray(R"({"id":"a/b"})");
    QTest::newRow("entry without id") << QByteArray(R"([{"likes":1}])");
    QTest::newRow("likes as text") << QByteArray(R"([{"id":"a/b","likes":"many"}])");
  }
  void refusesMalformedAnswers() {
    QFETCH(QByteArray, answer);
    QVERIFY_THROWS_EXCEPTION(HubProtocolError, parse_model_list(answer.toStdString()));
  }

  void readsRepositoryInfoWithSizesAndLfsHashes() {
    const auto info = parse_model_info(
        R"({"id":"org/m","sha":"0123456789012345678901234567890123456789","siblings":[
             {"rfilename":"config.json","size":120,"blobId":"1111111111111111111111111111111111111111"},
             {"rfilename":"model.safetensors","size":9000,"blobId":"2222222222222222222222222222222222222222",
              "lfs":{"sha256":")" +
        kSha256 + R"(","size":9000,"pointerSize":134}}]})");
    QCOMPARE(info.sha, std::string("0123456789012345678901234567890123456789"));
    QCOMPARE(info.files.size(), 2u);
    QCOMPARE(info.files[0].size, 120);
    QVERIFY(!info.files[0].lfs);
    QCOMPARE(info.files[0].etag(), std::string(40, '1'));
    QCOMPARE(info.files[1].lfs->size, 9000);
    QCOMPARE(info.files[1].etag(), kSha256);
  }

  void readsRefsAndTrees() {
    const auto refs = parse_refs(
        R"({"branches":[{"name":"main","ref":"refs/heads/main","targetCommit":"abc"},
                        {"name":"4.0bpw","ref":"refs/heads/4.0bpw","targetCommit":"def"}],
            "converts":[],"tags":[{"name":"v1","ref":"refs/tags/v1","targetCommit":"123"}]})");
    QCOMPARE(refs.branches.size(), 2u);
    QCOMPARE(refs.branches[1].name, std::string("4.0bpw"));
    QCOMPARE(refs.branches[1].target_commit, std::string("def"));
    QCOMPARE(refs.tags[0].ref, std::string("refs/tags/v1"));

    // In trees the LFS hash is "lfs.oid", not "lfs.sha256".
    const auto tree = parse_tree(
        R"([{"type":"directory","oid":"0","size":0,"path":"sub"},
            {"type":"file","oid":"aaa","size":5,"path":"sub/w.bin",
             "lfs":{"oid":")" +
        kSha256 + R"(","size":5,"pointerSize":134}}])");
    QCOMPARE(tree.size(), 2u);
    QVERIFY(tree[0].is_directory);
    QCOMPARE(tree[1].lfs->sha256, kSha256);
    QVERIFY_THROWS_EXCEPTION(HubProtocolError, parse_tree(R"([{"type":"link","path":"x"}])"));
  }

  void readsErrorBodies() {
    QCOMPARE(error_message_of(R"({"error":"Repository not found"})"),
             std::string("Repository not found"));
    QCOMPARE(error_message_of("Not Found"), std::string());
  }

  void followsOnlyTheNextLink_data() {
    QTest::addColumn<QByteArray>("header");
    QTest::addColumn<QByteArray>("next");
    QTest::newRow("next") << QByteArray(
                                 R"(<https://hf.co/api/models?cursor=x&limit=5>; rel="next")")
                          << QByteArray("https://hf.co/api/models?cursor=x&limit=5");
    QTest::newRow("prev then next")
        << QByteArray(R"(<https://a/p1>; rel="prev", <https://a/p3>; rel="next")")
        << QByteArray("https://a/p3");
    QTest::newRow("unquoted") << QByteArray("<https://a/p2>; rel=next")
                              << QByteArray("https://a/p2");
    QTest::newRow("only prev") << QByteArray(R"(<https://a/p1>; rel="prev")") << QByteArray();
    QTest::newRow("empty") << QByteArray() << QByteArray();
  }
  void followsOnlyTheNextLink() {
    QFETCH(QByteArray, header);
    QFETCH(QByteArray, next);
    const auto url = next_page_url(header.toStdString());
    QCOMPARE(QByteArray::fromStdString(url.value_or("")), next);
    QCOMPARE(url.has_value(), !next.isEmpty());
  }

  void readsFileMetadata() {
    // The Hub's redirect for an LFS file: the size is X-Linked-Size, never
    // the redirect page's Content-Length.
    const FileMetadata lfs = file_metadata(headers_of({{"X-Repo-Commit", std::string(40, 'a')},
                                                       {"X-Linked-Etag", "\"" + kSha256 + "\""},
                                                       {"X-Linked-Size", "123456"},
                                                       {"Content-Length", "80"},
                                                       {"ETag", "W/\"bbb\""},
                                                       {"Location", "https://cdn/x"}}),
                                           true);
    QCOMPARE(lfs.etag, kSha256);
    QCOMPARE(lfs.size, 123456);
    QCOMPARE(lfs.location, std::string("https://cdn/x"));
    // A small file answered directly: ETag and Content-Length.
    const FileMetadata small =
        file_metadata(headers_of({{"X-Repo-Commit", std::string(40, 'a')},
                                  {"ETag", "W/\"" + std::string(40, 'e') + "\""},
                                  {"Content-Length", "80"}}),
                      false);
    QCOMPARE(small.etag, std::string(40, 'e'));
    QCOMPARE(small.size, 80);
    QVERIFY_THROWS_EXCEPTION(
        HubProtocolError,
        file_metadata(headers_of({{"ETag", "\"x\""}, {"Content-Length", "1"}}), false));
    QVERIFY_THROWS_EXCEPTION(
        HubProtocolError,
        file_metadata(
            headers_of({{"X-Repo-Commit", "c"}, {"ETag", "\"x\""}, {"Content-Length", "1"}}),
            true));
  }

  void readsRetryAfterAndContentRange() {
    QCOMPARE(retry_after_seconds("120", 0).value_or(-1), 120);
    // Wed, 21 Oct 2015 07:28:00 GMT is 1445412480.
    QCOMPARE(retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", 1445412470).value_or(-1), 10);
    QCOMPARE(retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", 1445412490).value_or(-1), 0);
    QVERIFY(!retry_after_seconds("soon", 0));
    QVERIFY(!retry_after_seconds("-3", 0));

    const auto range = parse_content_range("bytes 100-199/1000");
    QVERIFY(range);
    QCOMPARE(range->first, 100);
    QCOMPARE(range->last, 199);
    QCOMPARE(range->total, 1000);
    QCOMPARE(parse_content_range("bytes 0-9/*")->total, -1);
    QVERIFY(!parse_content_range("bytes */1000"));
    QVERIFY(!parse_content_range("bytes 5-1/10"));
  }

  void resolvesSettingsAsHuggingFaceHubDoes() {
    QTemporaryDir home;
    const std::string root = home.path().toStdString();
    std::filesystem::create_directories(root + "/hf");
    std::ofstream(root + "/hf/token") << "  hf_fromfile\n";
    std::ofstream(root + "/other-token") << "hf_otherfile";

    HubSettings defaults = resolve_hub_settings(environment_of({{"HOME", root}}));
    QCOMPARE(defaults.endpoint, std::string("https://huggingface.co"));
    QCOMPARE(defaults.hf_home, std::filesystem::path(root + "/.cache/huggingface"));
    QCOMPARE(defaults.cache_dir, std::filesystem::path(root + "/.cache/huggingface/hub"));
    QCOMPARE(defaults.token, std::string());
    QVERIFY(!defaults.offline);

    QCOMPARE(resolve_hub_settings(environment_of({{"XDG_CACHE_HOME", root + "/xdg"}})).cache_dir,
             std::filesystem::path(root + "/xdg/huggingface/hub"));

    HubSettings from_home =
        resolve_hub_settings(environment_of({{"HF_HOME", root + "/hf"},
                                             {"HF_ENDPOINT", "http://mirror:8080//"},
                                             {"HF_HUB_OFFLINE", "yes"}}));
    QCOMPARE(from_home.cache_dir, std::filesystem::path(root + "/hf/hub"));
    QCOMPARE(from_home.endpoint, std::string("http://mirror:8080"));
    QCOMPARE(from_home.token, std::string("hf_fromfile"));
    QVERIFY(from_home.offline);

    QCOMPARE(resolve_hub_settings(environment_of({{"HF_HOME", root + "/hf"},
                                                  {"HF_HUB_CACHE", root + "/c"},
                                                  {"HUGGINGFACE_HUB_CACHE", root + "/old"}}))
                 .cache_dir,
             std::filesystem::path(root + "/c"));
    QCOMPARE(resolve_hub_settings(environment_of({{"HF_HOME", root + "/hf"},
                                                  {"HUGGINGFACE_HUB_CACHE", root + "/old"}}))
                 .cache_dir,
             std::filesystem::path(root + "/old"));

    // Token precedence: HF_TOKEN, HUGGING_FACE_HUB_TOKEN, HF_TOKEN_PATH, $HF_HOME/token.
    QCOMPARE(resolve_hub_settings(environment_of({{"HF_HOME", root + "/hf"},
                                                  {"HF_TOKEN", "hf_env"},
                                                  {"HUGGING_FACE_HUB_TOKEN", "hf_legacy"}}))
                 .token,
             std::string("hf_env"));
    QCOMPARE(resolve_hub_settings(environment_of({{"HF_HOME", root + "/hf"},
                                                  {"HUGGING_FACE_HUB_TOKEN", "hf_legacy"}}))
                 .token,
             std::string("hf_legacy"));
    QCOMPARE(resolve_hub_settings(environment_of({{"HF_HOME", root + "/hf"},
                                                  {"HF_TOKEN_PATH", root + "/other-token"}}))
                 .token,
             std::string("hf_otherfile"));
    QCOMPARE(resolve_hub_settings(environment_of({{"HF_HOME", root + "/hf"},
                                                  {"HF_TOKEN", "hf_env"},
                                                  {"HF_HUB_DISABLE_IMPLICIT_TOKEN", "1"}}))
                 .token,
             std::string());
    QVERIFY(resolve_hub_settings(environment_of({{"TRANSFORMERS_OFFLINE", "TRUE"}})).offline);
    QVERIFY(
        resolve_hub_settings(environment_of({{"HF_HUB_DISABLE_SYMLINKS", "on"}})).disable_symlinks);
    QVERIFY(!defaults.disable_symlinks);
    QVERIFY(!resolve_hub_settings(environment_of({{"HF_HUB_OFFLINE", "0"}})).offline);
  }

  void findsQuiresModelsFolderAsXdgSays() {
    QCOMPARE(default_quire_models_folder(environment_of({{"HOME", "/home/u"}})),
             std::filesystem::path("/home/u/.local/share/Quire/models"));
    QCOMPARE(default_quire_models_folder(
                 environment_of({{"HOME", "/home/u"}, {"XDG_DATA_HOME", "/data/xdg"}})),
             std::filesystem::path("/data/xdg/Quire/models"));
    // The XDG rules ignore an empty or relative XDG_DATA_HOME.
    QCOMPARE(default_quire_models_folder(
                 environment_of({{"HOME", "/home/u"}, {"XDG_DATA_HOME", "relative"}})),
             std::filesystem::path("/home/u/.local/share/Quire/models"));
    QCOMPARE(
        default_quire_models_folder(environment_of({{"HOME", "/home/u"}, {"XDG_DATA_HOME", ""}})),
        std::filesystem::path("/home/u/.local/share/Quire/models"));
  }

  void filtersPathsWithGlobs() {
    FileFilter everything;
    QVERIFY(everything.accepts("a/b.bin"));
    FileFilter filter{{"*.safetensors", "*.json", "tokenizer/"}, {"*consolidated*"}};
    QVERIFY(filter.accepts("model.safetensors"));
    QVERIFY(filter.accepts("sub/model.safetensors"));  // '*' crosses '/', as fnmatch does
    QVERIFY(filter.accepts("tokenizer/vocab.txt"));
    QVERIFY(!filter.accepts("consolidated.safetensors"));
    QVERIFY(!filter.accepts("README.md"));
  }
};

QUIRE_TEST(HubProtocolTest)
#include "test_hub_protocol.moc"
