// Hugging Face's own JavaScript client (@huggingface/hub, pinned in
// package.json) against Quire's fake Hub and the cache Quire writes, for
// tests/app/hub/test_hub_reference_client.cpp. One command per run; the
// answer is one JSON value on stdout.
//
//   node hub_client_check.mjs scan CACHE_DIR
//       scanCacheDir: repositories, revisions, refs, sizes, files and warnings
//   node hub_client_check.mjs download HUB_URL REPO REVISION CACHE_DIR
//       snapshotDownload into CACHE_DIR: the snapshot folder
//   node hub_client_check.mjs search HUB_URL QUERY
//       listModels and modelInfo of the first result
import { listModels, modelInfo, scanCacheDir, snapshotDownload } from "@huggingface/hub";
import { relative } from "node:path";

const [command, ...args] = process.argv.slice(2);

// The client logs each download on console.debug; stdout carries only the answer.
console.debug = () => {};

async function scan(cacheDir) {
  const info = await scanCacheDir(cacheDir);
  return {
    warnings: info.warnings.map((warning) => String(warning.message ?? warning)),
    repos: info.repos.map((repo) => ({
      id: repo.id.name,
      type: repo.id.type,
      filesCount: repo.filesCount,
      size: repo.size,
      revisions: repo.revisions
        .map((revision) => ({
          commit: revision.commitOid,
          refs: [...revision.refs].sort(),
          size: revision.size,
          files: revision.files
            .map((file) => ({
              name: relative(revision.path, file.path),
              blob: relative(cacheDir, file.blob.path),
              size: file.blob.size,
            }))
            .sort((a, b) => a.name.localeCompare(b.name)),
        }))
        .sort((a, b) => a.commit.localeCompare(b.commit)),
    })),
  };
}

async function search(hubUrl, query) {
  const names = [];
  for await (const model of listModels({ hubUrl, search: { query }, limit: 10 })) names.push(model.name);
  const info = names.length > 0 ? await modelInfo({ hubUrl, name: names[0], additionalFields: ["sha"] }) : null;
  return { names, first: info && { name: info.name, sha: info.sha } };
}

let answer;
if (command === "scan") answer = await scan(args[0]);
else if (command === "download")
  answer = await snapshotDownload({ hubUrl: args[0], repo: args[1], revision: args[2], cacheDir: args[3] });
else if (command === "search") answer = await search(args[0], args[1]);
else {
  console.error(`unknown command ${command}`);
  process.exit(2);
}
process.stdout.write(JSON.stringify(answer) + "\n");
