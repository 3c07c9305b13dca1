// --- Tablewright's client runtime: the same in every generated TypeScript module ---
// Keys and items as blueprint/encoding.py writes them (tests/data/encoding-vectors.json), paging, writes keeping keys.

import { createHash } from "node:crypto";
import { DescribeTableCommand, ListTagsOfResourceCommand } from "@aws-sdk/client-dynamodb";
import { BatchGetCommand, DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, ScanCommand,
  TransactWriteCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";

type Row = Record<string, unknown>; // an item as the document client returns it, a request, a typed value

const SEPARATOR = "#";
const ENTITY_ATTRIBUTE = "_entity";
const BATCH_GET_LIMIT = 100; // keys per BatchGetItem request

/** The live table was deployed from another design than the one this module was generated for. */
export class StaleDesign extends Error {}

/** An update found no item of the entity under the key. */
export class ItemNotFound extends Error {}

/** One page of a pattern's items; `next` continues after its last item (null: there are no more). */
export interface Page<T> { items: T[]; next: string | null }

/** Options of a count: at most `limit` items (null: all); a read that hides expired items judges at `asOf` (now). */
export interface CountOptions { limit?: number | null; asOf?: Date | null }

/** Options of a read: those of a count, and the page token `start` to read on from. */
export interface ReadOptions extends CountOptions { start?: string | null }

function text(value: string): string {
  if (value.includes(SEPARATOR)) throw new RangeError(`value ${JSON.stringify(value)} contains the key separator '#'`);
  return value;
}

/** A number's shortest decimal text without an exponent, as Python writes it: `1e21` is 1000000000000000000000. */
function number(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`${value} is not a number DynamoDB stores`);
  const [mantissa, exponent] = String(value).split("e");
  if (exponent === undefined) return mantissa;
  const [whole, fraction = ""] = mantissa.replace("-", "").split(".");
  const digits = whole + fraction;
  const point = whole.length + Number(exponent);
  const text = point <= 0 ? `0.${"0".repeat(-point)}${digits}`
    : point >= digits.length ? digits + "0".repeat(point - digits.length)
      : `${digits.slice(0, point)}.${digits.slice(point)}`;
  return (mantissa.startsWith("-") ? "-" : "") + text;
}

/** A whole, not negative number's digits, zero-padded to `width`. */
function padded(value: number, width: number): string {
  if (!Number.isInteger(value) || value < 0) {
    throw new RangeError(`${value} cannot be zero-padded: padded key numbers must be whole and not negative`);
  }
  const digits = number(value);
  if (digits.length > width) throw new RangeError(`${value} has more than ${width} digits`);
  return digits.padStart(width, "0");
}

const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
  "November", "December"];
const pad = (value: number, width: number): string => String(value).padStart(width, "0");
const dayOfYear = (moment: Date): number =>
  Math.floor((moment.getTime() - Date.UTC(moment.getUTCFullYear(), 0, 1)) / 86_400_000) + 1;
/** The Thursday of a time's ISO week (Monday first): its year is the week's, its day of the year counts the week. */
const thursday = (moment: Date): Date => new Date(Date.UTC(moment.getUTCFullYear(), moment.getUTCMonth(),
  moment.getUTCDate() + 3 - ((moment.getUTCDay() + 6) % 7)));
/** strftime's directives (blueprints' and the ISO week's) in UTC: the text each reads (fixed digits or one of a few
 * fixed words: no unbounded repetition, so a format of distinct directives reads a value in one pass), and what each
 * writes. The reads are blueprint/encoding.py's TIME_FIELDS (tests/hostile/test_timestamp_formats.py). */
const DIRECTIVES: Record<string, [string, (t: Date) => string]> = {
  Y: ["[0-9]{4}", (t) => pad(t.getUTCFullYear(), 4)], y: ["[0-9]{2}", (t) => pad(t.getUTCFullYear() % 100, 2)],
  m: ["[0-9]{2}", (t) => pad(t.getUTCMonth() + 1, 2)], d: ["[0-9]{2}", (t) => pad(t.getUTCDate(), 2)],
  H: ["[0-9]{2}", (t) => pad(t.getUTCHours(), 2)], I: ["[0-9]{2}", (t) => pad(t.getUTCHours() % 12 || 12, 2)],
  M: ["[0-9]{2}", (t) => pad(t.getUTCMinutes(), 2)], S: ["[0-9]{2}", (t) => pad(t.getUTCSeconds(), 2)],
  p: ["AM|PM", (t) => (t.getUTCHours() < 12 ? "AM" : "PM")], j: ["[0-9]{3}", (t) => pad(dayOfYear(t), 3)],
  b: ["Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec", (t) => MONTHS[t.getUTCMonth()].slice(0, 3)],
  B: ["January|February|March|April|May|June|July|August|September|October|November|December",
    (t) => MONTHS[t.getUTCMonth()]],
  f: ["[0-9]{6}", (t) => pad(t.getUTCMilliseconds() * 1000, 6)],
  G: ["[0-9]{4}", (t) => pad(thursday(t).getUTCFullYear(), 4)],
  V: ["[0-9]{2}", (t) => pad(Math.ceil(dayOfYear(thursday(t)) / 7), 2)],
};

function validDate(moment: Date): Date {
  if (moment instanceof Date && !Number.isNaN(moment.getTime())) return moment;
  throw new RangeError(`${String(moment)} is not a valid Date`);
}

/** strftime in UTC, for the directives of DIRECTIVES (and `%%`). */
function strftime(moment: Date, format: string): string {
  validDate(moment);
  return format.replace(/%(.)/g, (whole, directive: string) =>
    (directive === "%" ? "%" : DIRECTIVES[directive]?.[1](moment) ?? whole));
}

/** The inverse of `strftime` (UTC), for a format of distinct directives (a blueprint's): its text, each directive a
 * named group of DIRECTIVES' fixed widths and words, matched in one pass. */
function strptime(value: string, format: string): Date {
  const seen = new Set<string>();
  const pattern = format.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/%([^])/g, (whole, directive: string) => {
    if (DIRECTIVES[directive] === undefined || seen.has(directive)) {
      throw new RangeError(`timestamp format ${format}: each directive once, of ${Object.keys(DIRECTIVES).join(" ")}`);
    }
    seen.add(directive);
    return `(?<${directive}>${DIRECTIVES[directive][0]})`;
  });
  const parts = new RegExp(`^(?:${pattern})$`).exec(value)?.groups;
  if (parts === undefined) {
    const shown = JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
    throw new RangeError(`${shown} is not a timestamp of the format ${format}`);
  }
  const name = parts.B ?? parts.b;
  const month = parts.m !== undefined ? Number(parts.m) - 1 : name === undefined ? 0
    : MONTHS.findIndex((full) => full.startsWith(name));
  let hours = Number(parts.H ?? parts.I ?? 0);
  if (parts.I !== undefined) hours = (hours % 12) + (parts.p === "PM" ? 12 : 0);
  // %y as Python reads it: 69-99 are 1969-1999, 00-68 are 2000-2068.
  const year = parts.Y !== undefined ? Number(parts.Y)
    : parts.y !== undefined ? Number(parts.y) + (Number(parts.y) >= 69 ? 1900 : 2000) : 1900;
  return new Date(Date.UTC(year, parts.j !== undefined ? 0 : month, Number(parts.j ?? parts.d ?? 1), hours,
    Number(parts.M ?? 0), Number(parts.S ?? 0), Math.floor(Number(parts.f ?? 0) / 1000)));
}

/** Whole seconds or milliseconds since 1970, truncated toward zero (as the Python client). */
const epoch = (moment: Date, millis: boolean): number => Math.trunc(validDate(moment).getTime() / (millis ? 1 : 1000));

/** A time in a key: iso8601, epoch_seconds (10 characters) or epoch_millis (13), minus sign first, or strftime. */
function timestamp(moment: Date, format: string): string {
  if (format === "epoch_seconds" || format === "epoch_millis") {
    const value = epoch(moment, format === "epoch_millis");
    const width = format === "epoch_millis" ? 13 : 10;
    return value < 0 ? `-${number(-value).padStart(width - 1, "0")}` : number(value).padStart(width, "0");
  }
  return strftime(moment, format === "iso8601" ? "%Y-%m-%dT%H:%M:%SZ" : format);
}

function readTimestamp(value: unknown, format: string): Date {
  if (format === "epoch_seconds") return new Date(Number(value) * 1000);
  if (format === "epoch_millis") return new Date(Number(value));
  return strptime(String(value), format === "iso8601" ? "%Y-%m-%dT%H:%M:%SZ" : format);
}

function day(value: string): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) throw new RangeError(`${JSON.stringify(value)} is not a YYYY-MM-DD date`);
  return value;
}

const momentOf = (value: Date | string): Date => (typeof value === "string" ? new Date(`${day(value)}T00:00Z`) : value);

/** The UTC month (2024-03), ISO week (2024-W09), day (2024-03-01) or hour (2024-03-01T09) of a Date or a date. */
function bucket(value: Date | string, unit: string): string {
  const formats: Record<string, string> = { month: "%Y-%m", week: "%G-W%V", day: "%Y-%m-%d", hour: "%Y-%m-%dT%H" };
  return strftime(momentOf(value), formats[unit] ?? "%Y-%m-%d");
}

/** Every bucket from the one holding `start` to the one holding `end`, in order (walked by the hour or day). */
function buckets(start: Date | string, end: Date | string, unit: string): string[] {
  const [last, found] = [bucket(end, unit), new Set<string>()]; // a bucket holds many steps, found once
  const step = unit === "hour" ? 3_600_000 : 86_400_000;
  for (let time = momentOf(start).getTime(); bucket(new Date(time), unit) <= last; time += step) {
    found.add(bucket(new Date(time), unit));
  }
  return [...found];
}

const shardNumbers = (shards: number): string[] =>
  Array.from({ length: shards }, (_, n) => String(n).padStart(String(shards - 1).length, "0"));

/** An item's shard: SHA-256 of its shard-by key texts joined by '#', first 8 hex digits, modulo shards, padded. */
function shard(values: string[], shards: number): string {
  const digest = createHash("sha256").update(values.join(SEPARATOR), "utf8").digest("hex");
  return shardNumbers(shards)[parseInt(digest.slice(0, 8), 16) % shards];
}

/** A request template's low-level values as the document client takes them: {"N": "1"} is 1, {"S": "a"} is "a". */
const nativeValues = (values: Record<string, Row>): Row => Object.fromEntries(Object.entries(values)
  .map(([name, typed]) => [name, "N" in typed ? Number(typed.N) : Object.values(typed)[0]]));

/** The request with every `{name}` in its strings replaced by the value's text. */
function bind(template: unknown, values: Record<string, string>): unknown {
  if (typeof template === "string") { // one pass: a value that holds `{...}` stays as it is
    return template.replace(/\{([A-Za-z0-9_.:]+)\}/g, (whole, name: string) => values[name] ?? whole);
  }
  if (Array.isArray(template)) return template.map((value) => bind(value, values));
  if (template === null || typeof template !== "object") return template;
  return Object.fromEntries(Object.entries(template).map(([key, value]) => [key, bind(value, values)]));
}

/** A bound request for the document client: its key and expression values as plain values. */
function request(template: Row, values: Record<string, string>): Row {
  const body = bind(template, values) as Row;
  for (const part of ["ExpressionAttributeValues", "Key"]) {
    if (body[part] !== undefined) body[part] = nativeValues(body[part] as Record<string, Row>);
  }
  return body;
}

type Position = Row | null | false; // null: not begun, false: done, else the ExclusiveStartKey

const isKey = (position: unknown): boolean => position !== null && typeof position === "object"
  && !Array.isArray(position) && Object.keys(position).length > 0
  && Object.values(position).every((value) => typeof value === "string" || typeof value === "number");

/** Where each request stands after the page token `start` of the read `digest` (once `limit` is checked). */
function positionsOf(start: string | null | undefined, digest: string, count: number,
  limit: number | null): Position[] {
  if (limit !== null && (!Number.isInteger(limit) || limit < 1)) {
    throw new RangeError(`limit ${limit}: a page holds at least 1 item (null: every item)`);
  }
  if (start === null || start === undefined) return Array<Position>(count).fill(null);
  let at: unknown;
  try {
    const data = JSON.parse(Buffer.from(start, "base64url").toString()) as { read?: unknown; at?: unknown } | null;
    at = data?.read === digest ? data.at : undefined;
  } catch { /* not JSON: refused below */ }
  if (Array.isArray(at) && at.length === count
    && at.every((position) => position === null || position === false || isKey(position))) return at as Position[];
  throw new RangeError("not a page token of this read (a token continues the call that returned it, with the same "
    + "arguments)");
}

const keyOf = (item: Row, names: readonly string[]): Row => Object.fromEntries(names.map((name) => [name, item[name]]));

const identity = (item: Row, tableKeys: readonly string[]): string => JSON.stringify(tableKeys.map((k) => item[k]));

/** A read's requests (one, or one per shard or time bucket), page by page, where each stands, and its page token. */
function reader(client: DynamoDBDocumentClient, operation: string, bodies: Row[], start: string | null | undefined,
  limit: number | null) {
  const digest = createHash("sha256").update(JSON.stringify(bodies)).digest("hex").slice(0, 16);
  const positions = positionsOf(start, digest, bodies.length, limit);
  const token = (): string | null => (positions.every((position) => position === false) ? null
    : Buffer.from(JSON.stringify({ read: digest, at: positions })).toString("base64url"));
  /** One page of request `number` from `position` (null: its start), of `wanted` items (null: all it holds). */
  const page = (number: number, position: Position, wanted: number | null) => {
    const input: Row = { ...bodies[number] };
    if (position !== null && position !== false) input.ExclusiveStartKey = position;
    if (wanted === null) delete input.Limit;
    else if (input.Limit !== undefined) input.Limit = wanted; // none with a filter: it would count before it
    return operation === "Query" ? client.send(new QueryCommand(input as unknown as QueryCommand["input"]))
      : client.send(new ScanCommand(input as unknown as ScanCommand["input"]));
  };
  /** Items of request `number` from where it stands until `wanted` have arrived; it then stands after them. */
  const pages = async (number: number, wanted: number | null, pageKeys: readonly string[]): Promise<Row[]> => {
    const items: Row[] = [];
    for (;;) {
      const answer = await page(number, positions[number], wanted === null ? null : wanted - items.length);
      items.push(...((answer.Items ?? []) as Row[]));
      positions[number] = (answer.LastEvaluatedKey as Row | undefined) ?? false;
      if (wanted !== null && items.length > wanted) { // stopped inside a page: go on after the last item kept
        positions[number] = keyOf(items[wanted - 1], pageKeys);
        return items.slice(0, wanted);
      }
      if (positions[number] === false || (wanted !== null && items.length === wanted)) return items;
    }
  };
  return {
    /** The requests read one after another (one request, or one per time bucket) until `limit` items. */
    async inOrder(pageKeys: readonly string[]): Promise<[Row[], string | null]> {
      const items: Row[] = [];
      for (let number = 0; number < bodies.length; number += 1) {
        const wanted = limit === null ? null : limit - items.length;
        if (wanted === 0) break;
        if (positions[number] !== false) items.push(...await pages(number, wanted, pageKeys));
      }
      return [items, token()];
    },
    /** Each shard read up to `limit` items, merged in sort-key order; each resumes after the last of its kept. */
    async merged(pageKeys: readonly string[], sortKey: string | null,
      descending: boolean): Promise<[Row[], string | null]> {
      const starts = [...positions];
      const candidates: { key: string; shard: number; item: Row }[] = [];
      for (let number = 0; number < bodies.length; number += 1) {
        if (positions[number] === false) continue;
        // Each item's sort key as its UTF-8 bytes, one character each: `<` compares them as DynamoDB orders text.
        candidates.push(...(await pages(number, limit, pageKeys)).map((item) => ({ shard: number, item,
          key: Buffer.from(String(sortKey === null ? "" : item[sortKey]), "utf8").toString("latin1") })));
      }
      // Array.prototype.sort is stable: ties keep the shard order.
      const kept = [...candidates].sort((a, b) => (descending ? -1 : 1) * (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
        .slice(0, limit ?? candidates.length);
      for (let number = 0; number < bodies.length; number += 1) {
        const own = kept.filter((entry) => entry.shard === number); // its first items: they are fetched in order
        if (own.length < candidates.filter((entry) => entry.shard === number).length) { // not all of them kept
          positions[number] = own.length > 0 ? keyOf(own[own.length - 1].item, pageKeys) : starts[number];
        }
      }
      return [kept.map((entry) => entry.item), token()];
    },
    /** How many items the requests (`Select: COUNT`) match across every page, at most `limit`. */
    async count(): Promise<number> {
      let total = 0;
      for (let number = 0; number < bodies.length; number += 1) {
        for (let position: Position = null; limit === null || total < limit;) {
          const answer = await page(number, position, limit === null ? null : limit - total);
          total += answer.Count ?? 0;
          if (answer.LastEvaluatedKey === undefined) break;
          position = answer.LastEvaluatedKey;
        }
      }
      return limit === null ? total : Math.min(total, limit);
    },
  };
}

/** A request's part that reads only `names`. */
function projection(names: readonly string[]): Row {
  const placeholders = Object.fromEntries(names.map((name, number) => [`#a${number}`, name]));
  return { ProjectionExpression: Object.keys(placeholders).join(", "), ExpressionAttributeNames: placeholders };
}

/** The attributes an index does not project, read from the table by key. */
async function fetchMissing(client: DynamoDBDocumentClient, table: string, items: Row[],
  tableKeys: readonly string[], attributes: readonly string[]): Promise<Row[]> {
  const fetched = await batchRead(client, table, projection([...new Set([...attributes, ...tableKeys])]),
    items.map((item) => keyOf(item, tableKeys)), tableKeys);
  const found = new Map(fetched.map((item) => [identity(item, tableKeys), item]));
  return items.map((item) => ({ ...item, ...(found.get(identity(item, tableKeys)) ?? {}) }));
}

/** A batch get's items: its template's key (`Keys` holds the one) bound to each key's values, each key once, in
 * their order. `before`: while a migration moves the items, the template of the key old items carry, read for the
 * keys without an item. */
async function batchGet(client: DynamoDBDocumentClient, table: string, template: Row,
  wanted: Record<string, string>[], tableKeys: readonly string[], before: Row | null = null): Promise<Row[]> {
  const { Keys: [keyTemplate], ...read } = template as { Keys: Record<string, Row>[] };
  const keysOf = (key: Record<string, Row>) => wanted.map((values) => nativeValues(bind(key, values) as typeof key));
  const keys = keysOf(keyTemplate);
  const found = await batchRead(client, table, read, keys, tableKeys);
  if (before === null) return found;
  const byKey = new Map(found.map((item) => [identity(item, tableKeys), item]));
  const oldKeys = keysOf((before as { Keys: Record<string, Row>[] }).Keys[0]);
  const missing = oldKeys.filter((_, n) => !byKey.has(identity(keys[n], tableKeys)));
  const moved = new Map((await batchRead(client, table, read, missing, tableKeys))
    .map((item) => [identity(item, tableKeys), item]));
  const rows = new Map<string, Row | undefined>(keys.map((key, n) => [identity(key, tableKeys),
    byKey.get(identity(key, tableKeys)) ?? moved.get(identity(oldKeys[n], tableKeys))]));
  return [...rows.values()].filter((item): item is Row => item !== undefined);
}

/** GetItem. While a migration moves the item (`before`: the request of its old key): the old key when the new one
 * holds nothing, then the new one again (the item may have moved in between). */
async function getItem(client: DynamoDBDocumentClient, input: Row, before: Row | null): Promise<Row | undefined> {
  const get = async (request: Row) => (await client.send(new GetCommand(request as GetCommand["input"]))).Item;
  const item = await get(input);
  if (item !== undefined || before === null) return item;
  return (await get(before)) ?? get(input);
}

/** The items of `keys`, each once, in their order (no item: left out): BatchGetItem, 100 keys a request, retried. */
async function batchRead(client: DynamoDBDocumentClient, table: string, read: Row, keys: Row[],
  tableKeys: readonly string[]): Promise<Row[]> {
  const unique = [...new Map(keys.map((key) => [identity(key, tableKeys), key])).values()];
  const found = new Map<string, Row>();
  for (let first = 0; first < unique.length; first += BATCH_GET_LIMIT) {
    let pending: Row | undefined = { [table]: { ...read, Keys: unique.slice(first, first + BATCH_GET_LIMIT) } };
    for (let retries = 0; pending !== undefined && Object.keys(pending).length > 0; retries += 1) {
      if (retries > 0) await new Promise((done) => setTimeout(done, Math.min(1000, 50 * 2 ** retries)));
      const answer = await client.send(new BatchGetCommand({
        RequestItems: pending as BatchGetCommand["input"]["RequestItems"] }));
      for (const item of (answer.Responses?.[table] ?? []) as Row[]) found.set(identity(item, tableKeys), item);
      pending = answer.UnprocessedKeys as Row | undefined;
    }
  }
  return unique.map((key) => found.get(identity(key, tableKeys))).filter((item): item is Row => item !== undefined);
}

async function checkDesign(client: DynamoDBDocumentClient, table: string, digest: string, tag: string): Promise<void> {
  const arn = (await client.send(new DescribeTableCommand({ TableName: table }))).Table?.TableArn;
  const tags = new Map<string, string>();
  let next: string | undefined;
  do {
    const answer = await client.send(new ListTagsOfResourceCommand({ ResourceArn: arn, NextToken: next }));
    for (const entry of answer.Tags ?? []) tags.set(entry.Key ?? "", entry.Value ?? "");
    next = answer.NextToken;
  } while (next);
  const live = tags.get(tag);
  if (live === digest) return;
  throw new StaleDesign(`table ${table} carries ${live ? `design ${live}` : `no ${tag} tag`}, this module was `
    + `generated for design ${digest}: regenerate it from the blueprint the table was deployed from`);
}
