#!/usr/bin/env node
// Prints the configuration a release build is given on top of src-tauri/tauri.conf.json (for
// `tauri build --config`, or TAURI_CONFIG for a plain cargo build): the updater's endpoints
// and, for a distributor with a key of their own, its public key. The repository's config
// names no endpoint on purpose (docs/release.md); scripts/package and the release workflow
// both take them from here, so every platform's build is given the same ones.
//
//   node scripts/updater-config.mjs [--require-endpoints] [BASE_JSON]
//
//   WYCKOFF_RELEASE_ENDPOINTS  update manifests (latest.json), https, separated by spaces,
//                              tried in order: the mirror first, then the project's releases
//   WYCKOFF_RELEASE_PUBKEY     the content of the distributor's `.pub` file; unset: the key
//                              in tauri.conf.json
//   BASE_JSON                  more configuration to merge with (a platform's bundle
//                              settings); the updater part is added under plugins.updater
//   --require-endpoints        fail when no endpoint is given (a release build without them
//                              never hears of the next version)
//
// Prints nothing when there is nothing to merge (no endpoint, no key, no BASE_JSON).
import process from "node:process";

const args = process.argv.slice(2);
const require = args.includes("--require-endpoints");
const rest = args.filter((a) => a !== "--require-endpoints");
if (rest.length > 1) {
  process.stderr.write("usage: node scripts/updater-config.mjs [--require-endpoints] [BASE_JSON]\n");
  process.exit(2);
}

function fail(message) {
  process.stderr.write(`updater-config: ${message}\n`);
  process.exit(1);
}

let config = {};
if (rest.length === 1) {
  try {
    config = JSON.parse(rest[0]);
  } catch (e) {
    fail(`BASE_JSON is not JSON: ${e.message}`);
  }
}

const endpoints = (process.env.WYCKOFF_RELEASE_ENDPOINTS ?? "").split(/\s+/).filter(Boolean);
for (const url of endpoints) {
  // a release build refuses plain http, and a manifest lives under a path
  if (!/^https:\/\/[^/\s]+\/.+/.test(url)) {
    fail(`WYCKOFF_RELEASE_ENDPOINTS: '${url}' is not an https URL of a manifest (a release build refuses plain http)`);
  }
}
if (require && endpoints.length === 0) {
  fail("WYCKOFF_RELEASE_ENDPOINTS is empty: a release built without update endpoints would never hear of the next version");
}
const pubkey = (process.env.WYCKOFF_RELEASE_PUBKEY ?? "").trim();

const updater = {};
if (endpoints.length) updater.endpoints = endpoints;
if (pubkey) updater.pubkey = pubkey;
if (Object.keys(updater).length) {
  config.plugins ??= {};
  config.plugins.updater = { ...(config.plugins.updater ?? {}), ...updater };
}
if (Object.keys(config).length) process.stdout.write(JSON.stringify(config));
