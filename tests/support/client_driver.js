// Drives a generated TypeScript client (compiled to CommonJS) for tests/client/test_client_typescript.py: one JSON
// request per stdin line, {"method": "putOrder", "args": [...]}, one JSON answer per stdout line,
// {"result": ...} or {"error": {"name": ..., "message": ...}}. Dates, sets and bytes travel tagged:
// {"$date": ISO}, {"$set": [...]}, {"$bytes": base64}.
"use strict";
const readline = require("node:readline");
const { DynamoDBClient } = require("@aws-sdk/client-dynamodb");
const { DynamoDBDocumentClient } = require("@aws-sdk/lib-dynamodb");

const [moduleFile, className, endpoint, tableName] = process.argv.slice(2);
const generated = require(moduleFile);
const low = new DynamoDBClient({ endpoint, region: "us-east-1", credentials: { accessKeyId: "testing", secretAccessKey: "testing" } });
const table = new generated[className](DynamoDBDocumentClient.from(low), tableName);

function decode(value) {
  if (Array.isArray(value)) return value.map(decode);
  if (value !== null && typeof value === "object") {
    if ("$date" in value) return new Date(value.$date);
    if ("$set" in value) return new Set(value.$set.map(decode));
    if ("$bytes" in value) return new Uint8Array(Buffer.from(value.$bytes, "base64"));
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, decode(v)]));
  }
  return value;
}

function encode(value) {
  if (value instanceof Date) return { $date: value.toISOString() };
  if (value instanceof Set) return { $set: [...value].map(encode) };
  if (value instanceof Uint8Array) return { $bytes: Buffer.from(value).toString("base64") };
  if (Array.isArray(value)) return value.map(encode);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, encode(v)]));
  }
  return value === undefined ? null : value;
}

const lines = readline.createInterface({ input: process.stdin });
let queue = Promise.resolve();
lines.on("line", (line) => {
  queue = queue.then(async () => {
    const { method, args } = JSON.parse(line);
    try {
      const result = await table[method](...decode(args));
      process.stdout.write(JSON.stringify({ result: encode(result) }) + "\n");
    } catch (error) {
      process.stdout.write(JSON.stringify({ error: { name: error.constructor.name, message: String(error.message) } }) + "\n");
    }
  });
});
