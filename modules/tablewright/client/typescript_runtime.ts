// --- Tablewright's client runtime: the same in every generated TypeScript module ---
// How values are written into keys and items, and how reads are paged. Mirrors modules/tablewright/blueprint/encoding.py.

import { createHash } from "node:crypto";
import { DescribeTableCommand, ListTagsOfResourceCommand } from "@aws-sdk/client-dynamodb";
import {
  BatchGetCommand,
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  TransactWriteCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";

type Row = Record<string, unknown>; // an item as the document client returns it
type Typed = { [type: string]: unknown }; // a low-level value of a request template: {"S": "text"}

const SEPARATOR = "#";
const ENTITY_ATTRIBUTE = "_entity";
const BATCH_GET_LIMIT = 100; // keys per BatchGetItem request

/** The live table was deployed from another design than the one this module was generated for. */
export class StaleDesign extends Error {}

/** An update found no item of the entity under the key. */
export class ItemNotFound extends Error {}

/** One page of a pattern's items; `next` continues after its last item (null: there are no more). */
export interface Page<T> {
  items: T[];
  next: string | null;
}

/** Options of a count: count at most `limit` items (null: all of them); a read that hides expired items hides
 * those past their TTL at `asOf` (default: now). */
export interface CountOptions {
  limit?: number | null;
  asOf?: Date | null;
}

/** Options of a read: at most `limit` items (null: all of them), from the page token `start`; a read that hides
 * expired items hides those past their TTL at `asOf` (default: now). */
export interface ReadOptions {
  limit?: number | null;
  start?: string | null;
  asOf?: Date | null;
}

function text(value: string): string {
  if (value.includes(SEPARATOR)) {
    throw new RangeError(`value ${JSON.stringify(value)} contains the key separator '${SEPARATOR}'`);
  }
  return value;
}

/** A number's shortest decimal text, never in exponent notation (as the Python client writes it): `1e21` is
 * `1000000000000000000000`, `1e-7` is `0.0000001`. */
function number(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`${value} is not a number DynamoDB stores`);
  const [mantissa, exponent] = String(value).split("e");
  if (exponent === undefined) return mantissa;
  const negative = mantissa.startsWith("-");
  const [whole, fraction = ""] = mantissa.replace("-", "").split(".");
  const digits = whole + fraction;
  const point = whole.length + Number(exponent);
  const text = point <= 0 ? `0.${"0".repeat(-point)}${digits}`
    : point >= digits.length ? digits + "0".repeat(point - digits.length)
      : `${digits.slice(0, point)}.${digits.slice(point)}`;
  return (negative ? "-" : "") + text;
}

/** `value` zero-padded to `width` digits, a minus sign first (as Python's `f"{value:0{width}d}"`). */
function zeroPadded(value: number, width: number): string {
  const digits = number(Math.abs(value));
  return value < 0 ? `-${digits.padStart(width - 1, "0")}` : digits.padStart(width, "0");
}

function padded(value: number, width: number): string {
  if (!Number.isInteger(value) || value < 0) {
    throw new RangeError(`${value} cannot be zero-padded: padded key numbers must be whole and not negative`);
  }
  const digits = zeroPadded(value, width);
  if (digits.length > width) throw new RangeError(`${value} has more than ${width} digits`);
  return digits;
}

const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
  "November", "December"];

function two(value: number): string {
  return String(value).padStart(2, "0");
}

function dayOfYear(moment: Date): number {
  return Math.floor((moment.getTime() - Date.UTC(moment.getUTCFullYear(), 0, 1)) / 86_400_000) + 1;
}

/** strftime in UTC for the directives blueprints allow: Y y m d H I M S p b B j f. */
function validDate(moment: Date): Date {
  if (!(moment instanceof Date) || Number.isNaN(moment.getTime())) {
    throw new RangeError(`${String(moment)} is not a valid Date`);
  }
  return moment;
}

function strftime(moment: Date, format: string): string {
  const hours = validDate(moment).getUTCHours();
  const fields: Record<string, string> = {
    Y: String(moment.getUTCFullYear()).padStart(4, "0"), y: two(moment.getUTCFullYear() % 100),
    m: two(moment.getUTCMonth() + 1), d: two(moment.getUTCDate()), H: two(hours), I: two(hours % 12 || 12),
    M: two(moment.getUTCMinutes()), S: two(moment.getUTCSeconds()), p: hours < 12 ? "AM" : "PM",
    b: MONTHS[moment.getUTCMonth()].slice(0, 3), B: MONTHS[moment.getUTCMonth()],
    j: String(dayOfYear(moment)).padStart(3, "0"), f: String(moment.getUTCMilliseconds() * 1000).padStart(6, "0"),
    "%": "%",
  };
  return format.replace(/%(.)/g, (whole, directive: string) => fields[directive] ?? whole);
}

/** The inverse of `strftime` (UTC). */
function strptime(value: string, format: string): Date {
  const parts: Record<string, string> = {};
  const order: string[] = [];
  const widths: Record<string, string> = {
    Y: "\\d{4}", y: "\\d{2}", m: "\\d{2}", d: "\\d{2}", H: "\\d{2}", I: "\\d{2}", M: "\\d{2}", S: "\\d{2}",
    p: "AM|PM", b: "[A-Za-z]{3}", B: "[A-Za-z]+", j: "\\d{3}", f: "\\d{6}",
  };
  const pattern = format.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/%(.)/g, (whole, directive: string) => {
    if (directive === "%") return "%";
    order.push(directive);
    return `(${widths[directive] ?? ".+?"})`;
  });
  const match = new RegExp(`^${pattern}$`).exec(value);
  if (match === null) throw new RangeError(`${JSON.stringify(value)} does not match the format ${format}`);
  order.forEach((directive, position) => { parts[directive] = match[position + 1]; });
  const month = parts.m !== undefined ? Number(parts.m) - 1
    : parts.b !== undefined || parts.B !== undefined
      ? MONTHS.findIndex((name) => name.startsWith(parts.B ?? parts.b ?? "")) : 0;
  let hours = Number(parts.H ?? parts.I ?? 0);
  if (parts.I !== undefined) hours = (hours % 12) + (parts.p === "PM" ? 12 : 0);
  // %y as Python reads it: 69-99 are 1969-1999, 00-68 are 2000-2068.
  const year = parts.Y !== undefined ? Number(parts.Y)
    : parts.y !== undefined ? Number(parts.y) + (Number(parts.y) >= 69 ? 1900 : 2000) : 1900;
  const start = Date.UTC(year, parts.j !== undefined ? 0 : month, parts.j !== undefined ? Number(parts.j)
    : Number(parts.d ?? 1), hours, Number(parts.M ?? 0), Number(parts.S ?? 0),
  Math.floor(Number(parts.f ?? 0) / 1000));
  return new Date(start);
}

function epoch(moment: Date, millis: boolean): number {
  const time = validDate(moment).getTime();
  return millis ? time : Math.trunc(time / 1000); // toward zero, as the Python client
}

/** The `_now` of a read that hides expired items: `asOf`, else the current time, in epoch seconds. */
function clock(asOf: Date | null | undefined): string {
  return String(epoch(asOf ?? new Date(), false));
}

/** A timestamp inside a key: `iso8601`, `epoch_seconds` (10 digits), `epoch_millis` (13) or strftime. */
function timestamp(moment: Date, format: string): string {
  if (format === "epoch_seconds" || format === "epoch_millis") {
    const millis = format === "epoch_millis";
    return zeroPadded(epoch(moment, millis), millis ? 13 : 10);
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

function momentOf(value: Date | string): Date {
  return typeof value === "string" ? new Date(`${day(value)}T00:00:00Z`) : value;
}

/** The ISO 8601 week of a time (UTC): `2024-W09`, Monday first, with its ISO year (2024-12-30 is 2025-W01). */
function isoWeek(moment: Date): string {
  const weekday = (moment.getUTCDay() + 6) % 7; // Monday 0
  const thursday = new Date(Date.UTC(moment.getUTCFullYear(), moment.getUTCMonth(), moment.getUTCDate() - weekday + 3));
  const first = new Date(Date.UTC(thursday.getUTCFullYear(), 0, 4)); // 4 January is always in week 1
  const firstThursday = first.getTime() + (3 - ((first.getUTCDay() + 6) % 7)) * 86_400_000;
  const week = 1 + Math.round((thursday.getTime() - firstThursday) / (7 * 86_400_000));
  return `${String(thursday.getUTCFullYear()).padStart(4, "0")}-W${two(week)}`;
}

/** The UTC month (`2024-03`), ISO week (`2024-W09`), day (`2024-03-01`) or hour (`2024-03-01T09`) a time (a Date,
 * or a YYYY-MM-DD date) falls in. */
function bucket(value: Date | string, unit: string): string {
  const moment = momentOf(value);
  if (unit === "week") return isoWeek(moment);
  return strftime(moment, { month: "%Y-%m", day: "%Y-%m-%d", hour: "%Y-%m-%dT%H" }[unit] ?? "%Y-%m-%d");
}

/** Every bucket from the one holding `start` to the one holding `end`, in order. */
function buckets(start: Date | string, end: Date | string, unit: string): string[] {
  const last = bucket(end, unit);
  const from = momentOf(start);
  const midnight = Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate());
  let moment = new Date({
    month: Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), 1),
    week: midnight - ((from.getUTCDay() + 6) % 7) * 86_400_000,
    day: midnight,
    hour: midnight + from.getUTCHours() * 3_600_000,
  }[unit] ?? midnight);
  const found: string[] = [];
  for (let current = bucket(moment, unit); current <= last; current = bucket(moment, unit)) {
    found.push(current);
    moment = unit === "month" ? new Date(Date.UTC(moment.getUTCFullYear(), moment.getUTCMonth() + 1, 1))
      : new Date(moment.getTime() + ({ week: 7 * 86_400_000, hour: 3_600_000 }[unit] ?? 86_400_000));
  }
  return found;
}

/** The shard of an item: SHA-256 of its shard-by values (key text joined by '#'), first 8 hex digits, modulo
 * the shard count, zero-padded. */
function shard(values: string[], shards: number): string {
  const digest = createHash("sha256").update(values.join(SEPARATOR), "utf8").digest("hex");
  return String(parseInt(digest.slice(0, 8), 16) % shards).padStart(String(shards - 1).length, "0");
}

function shardNumbers(shards: number): string[] {
  return Array.from({ length: shards }, (_, n) => String(n).padStart(String(shards - 1).length, "0"));
}

/** A request template's low-level value as the document client takes it. */
function native(value: Typed): unknown {
  const [[type, inner]] = Object.entries(value);
  if (type === "N") return Number(inner);
  return inner;
}

function nativeValues(values: Record<string, Typed>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).map(([name, value]) => [name, native(value)]));
}

/** The request with every `{name}` in its strings replaced by the value's text. */
function bind(template: unknown, values: Record<string, string>): unknown {
  if (typeof template === "string") { // one pass: a value that holds `{...}` stays as it is
    return template.replace(/\{([A-Za-z0-9_.:]+)\}/g, (whole, name: string) => values[name] ?? whole);
  }
  if (Array.isArray(template)) return template.map((value) => bind(value, values));
  if (template !== null && typeof template === "object") {
    return Object.fromEntries(Object.entries(template).map(([key, value]) => [key, bind(value, values)]));
  }
  return template;
}

/** A bound request for the document client: its key and expression values as plain values. */
function request(template: Record<string, unknown>, values: Record<string, string>): Record<string, unknown> {
  const body = bind(template, values) as Record<string, unknown>;
  if (body.ExpressionAttributeValues !== undefined) {
    body.ExpressionAttributeValues = nativeValues(body.ExpressionAttributeValues as Record<string, Typed>);
  }
  if (body.Key !== undefined) body.Key = nativeValues(body.Key as Record<string, Typed>);
  return body;
}

type Position = Row | null | false; // null: not begun, false: done, else the ExclusiveStartKey

/** What a token belongs to: the read's requests, its values bound (another pattern or other values: another read). */
function readDigest(bodies: Record<string, unknown>[]): string {
  return createHash("sha256").update(JSON.stringify(bodies)).digest("hex").slice(0, 16);
}

function token(bodies: Record<string, unknown>[], positions: Position[]): string | null {
  if (positions.every((position) => position === false)) return null;
  return Buffer.from(JSON.stringify({ read: readDigest(bodies), at: positions })).toString("base64url");
}

function isKey(position: unknown): boolean {
  return position !== null && typeof position === "object" && !Array.isArray(position)
    && Object.keys(position).length > 0
    && Object.values(position).every((value) => typeof value === "string" || typeof value === "number");
}

function positionsOf(start: string | null | undefined, bodies: Record<string, unknown>[]): Position[] {
  if (start === null || start === undefined) return Array<Position>(bodies.length).fill(null);
  const refused = new RangeError("not a page token of this read (a token continues the call that returned it, with "
    + "the same arguments)");
  let data: unknown;
  try {
    data = JSON.parse(Buffer.from(start, "base64url").toString());
  } catch {
    throw refused;
  }
  const { read, at } = (data ?? {}) as { read?: unknown; at?: unknown };
  if (read !== readDigest(bodies) || !Array.isArray(at) || at.length !== bodies.length
    || !at.every((position) => position === null || position === false || isKey(position))) throw refused;
  return at as Position[];
}

function checkedLimit(limit: number | null): void {
  if (limit !== null && (!Number.isInteger(limit) || limit < 1)) {
    throw new RangeError(`limit ${limit}: a page holds at least 1 item (null: every item)`);
  }
}

/** Strings in DynamoDB's order: by UTF-8 bytes, which is by code point (JavaScript's `<` compares UTF-16 units). */
function compareText(left: string, right: string): number {
  const a = [...left];
  const b = [...right];
  for (let i = 0; i < Math.min(a.length, b.length); i += 1) {
    const difference = (a[i].codePointAt(0) ?? 0) - (b[i].codePointAt(0) ?? 0);
    if (difference !== 0) return difference;
  }
  return a.length - b.length;
}

function keyOf(item: Row, names: readonly string[]): Row {
  return Object.fromEntries(names.map((name) => [name, item[name]]));
}

/** Items of one request from `position` until `wanted` have arrived, and where it then stands. */
async function pages(client: DynamoDBDocumentClient, operation: string, body: Record<string, unknown>,
  start: Position, wanted: number | null, pageKeys: readonly string[]): Promise<[Row[], Position]> {
  const items: Row[] = [];
  let position = start;
  for (;;) {
    const input: Record<string, unknown> = { ...body };
    if (position !== null && position !== false) input.ExclusiveStartKey = position;
    if (wanted === null) delete input.Limit;
    else if (body.Limit !== undefined) input.Limit = wanted - items.length; // no Limit with a filter
    const answer = operation === "Query"
      ? await client.send(new QueryCommand(input as unknown as QueryCommand["input"]))
      : await client.send(new ScanCommand(input as unknown as ScanCommand["input"]));
    items.push(...((answer.Items ?? []) as Row[]));
    position = (answer.LastEvaluatedKey as Row | undefined) ?? false;
    if (wanted !== null && items.length > wanted) { // stopped inside a page: go on after the last item kept
      return [items.slice(0, wanted), keyOf(items[wanted - 1], pageKeys)];
    }
    if (position === false || (wanted !== null && items.length === wanted)) return [items, position];
  }
}

/** Requests read one after another (one request, or one per time bucket) until `limit` items. */
async function readInOrder(client: DynamoDBDocumentClient, operation: string, bodies: Record<string, unknown>[],
  limit: number | null, start: string | null | undefined, pageKeys: readonly string[]): Promise<[Row[], string | null]> {
  checkedLimit(limit);
  const positions = positionsOf(start, bodies);
  const items: Row[] = [];
  for (let number = 0; number < bodies.length; number += 1) {
    if (positions[number] === false) continue;
    const wanted = limit === null ? null : limit - items.length;
    if (wanted === 0) break;
    const [found, position] = await pages(client, operation, bodies[number], positions[number], wanted, pageKeys);
    positions[number] = position;
    items.push(...found);
  }
  return [items, token(bodies, positions)];
}

/** How many items the requests (`Select: COUNT`) match across every page, at most `limit`. */
async function countAll(client: DynamoDBDocumentClient, operation: string, bodies: Record<string, unknown>[],
  limit: number | null): Promise<number> {
  checkedLimit(limit);
  let total = 0;
  for (const body of bodies) {
    const input: Record<string, unknown> = { ...body };
    if (limit === null) delete input.Limit;
    while (limit === null || total < limit) {
      if (limit !== null && body.Limit !== undefined) input.Limit = limit - total; // no Limit with a filter
      const answer = operation === "Query"
        ? await client.send(new QueryCommand(input as unknown as QueryCommand["input"]))
        : await client.send(new ScanCommand(input as unknown as ScanCommand["input"]));
      total += answer.Count ?? 0;
      if (answer.LastEvaluatedKey === undefined) break;
      input.ExclusiveStartKey = answer.LastEvaluatedKey;
    }
  }
  return limit === null ? total : Math.min(total, limit);
}

/** One request per shard, merged in sort-key order: each shard reads up to `limit` of its items, the first
 * `limit` of all are kept, and each shard goes on after the last of its own items kept. */
async function readMerged(client: DynamoDBDocumentClient, bodies: Record<string, unknown>[], limit: number | null,
  start: string | null | undefined, pageKeys: readonly string[], sortKey: string | null,
  descending: boolean): Promise<[Row[], string | null]> {
  checkedLimit(limit);
  const positions = positionsOf(start, bodies);
  const candidates: { key: string; shard: number; item: Row }[] = [];
  const ends = [...positions];
  for (let number = 0; number < bodies.length; number += 1) {
    if (positions[number] === false) continue;
    const [found, end] = await pages(client, "Query", bodies[number], positions[number], limit, pageKeys);
    ends[number] = end;
    candidates.push(...found.map((item) => ({ key: sortKey === null ? "" : String(item[sortKey]), shard: number, item })));
  }
  const direction = descending ? -1 : 1;
  // Array.prototype.sort is stable: ties keep the shard order.
  const merged = [...candidates].sort((a, b) => direction * Math.sign(compareText(a.key, b.key)));
  const kept = limit === null ? merged : merged.slice(0, limit);
  for (let number = 0; number < bodies.length; number += 1) {
    const fetched = candidates.filter((entry) => entry.shard === number);
    const own = kept.filter((entry) => entry.shard === number);
    if (positions[number] === false || fetched.length === 0 || own.length === fetched.length) {
      positions[number] = ends[number];
    } else if (own.length > 0) { // a shard's items are fetched in order, so the kept ones are its first
      positions[number] = keyOf(own[own.length - 1].item, pageKeys);
    }
  }
  return [kept.map((entry) => entry.item), token(bodies, positions)];
}

/** The attributes an index does not project, read from the table by key. */
async function fetchMissing(client: DynamoDBDocumentClient, table: string, items: Row[], tableKeys: readonly string[],
  attributes: readonly string[]): Promise<Row[]> {
  const identity = (item: Row): string => JSON.stringify(tableKeys.map((name) => item[name]));
  const read = [...new Set([...attributes, ...tableKeys])];
  const names = Object.fromEntries(read.map((name, number) => [`#a${number}`, name]));
  const fetched = await batchRead(client, table, { ProjectionExpression: Object.keys(names).join(", "),
    ExpressionAttributeNames: names }, items.map((item) => keyOf(item, tableKeys)), tableKeys);
  const found = new Map(fetched.map((item) => [identity(item), item]));
  return items.map((item) => ({ ...item, ...(found.get(identity(item)) ?? {}) }));
}

/** A batch get's items: its template's key bound to each key's values (`Keys` holds the one template). */
async function batchGet(client: DynamoDBDocumentClient, table: string, template: Record<string, unknown>,
  wanted: Record<string, string>[], tableKeys: readonly string[]): Promise<Row[]> {
  const { Keys: keyTemplates, ...read } = template;
  const [keyTemplate] = keyTemplates as Record<string, Typed>[];
  const keys = wanted.map((values) => nativeValues(bind(keyTemplate, values) as Record<string, Typed>));
  return batchRead(client, table, read, keys, tableKeys);
}

/** The items of `keys` (each once, in their order, keys without an item left out): BatchGetItem, 100 keys
 * each, the unprocessed ones sent again after a pause. `read` is the rest of the request (projection...). */
async function batchRead(client: DynamoDBDocumentClient, table: string, read: Record<string, unknown>,
  keys: Row[], tableKeys: readonly string[]): Promise<Row[]> {
  const identity = (item: Row): string => JSON.stringify(tableKeys.map((name) => item[name]));
  const unique = [...new Map(keys.map((key) => [identity(key), key])).values()];
  const found = new Map<string, Row>();
  for (let first = 0; first < unique.length; first += BATCH_GET_LIMIT) {
    let pending: Record<string, unknown> | undefined = {
      [table]: { ...read, Keys: unique.slice(first, first + BATCH_GET_LIMIT) },
    };
    for (let retries = 0; pending !== undefined && Object.keys(pending).length > 0; retries += 1) {
      if (retries > 0) await new Promise((done) => setTimeout(done, Math.min(1000, 50 * 2 ** retries)));
      const answer = await client.send(new BatchGetCommand({ RequestItems: pending as BatchGetCommand["input"]["RequestItems"] }));
      for (const item of (answer.Responses?.[table] ?? []) as Row[]) found.set(identity(item), item);
      pending = answer.UnprocessedKeys as Record<string, unknown> | undefined;
    }
  }
  return unique.map((key) => found.get(identity(key))).filter((item): item is Row => item !== undefined);
}

async function checkDesign(client: DynamoDBDocumentClient, table: string, digest: string, tag: string): Promise<void> {
  const description = await client.send(new DescribeTableCommand({ TableName: table }));
  const tags = new Map<string, string>();
  let next: string | undefined;
  do {
    const answer = await client.send(new ListTagsOfResourceCommand({ ResourceArn: description.Table?.TableArn,
      NextToken: next }));
    for (const entry of answer.Tags ?? []) tags.set(entry.Key ?? "", entry.Value ?? "");
    next = answer.NextToken;
  } while (next);
  const live = tags.get(tag);
  if (live !== digest) {
    const deployed = live ? `design ${live}` : `no ${tag} tag`;
    throw new StaleDesign(`table ${table} carries ${deployed}, this module was generated for design ${digest}: `
      + "regenerate it from the blueprint the table was deployed from");
  }
}

/** The key attributes an entity writes for the table or one index. */
interface Keys {
  names: readonly string[]; // the item attributes (partition key, sort key)
  attributes: readonly string[]; // the entity attributes they are made of
  build: (values: Row) => Record<string, string>;
  sparse: boolean; // an item without one of `attributes` stays out of the index
}

interface EntitySpec {
  name: string;
  stored: Record<string, (value: never) => unknown>; // attribute -> its stored value
  read: Record<string, (value: never) => unknown>; // attribute -> its value from the stored one
  table: Keys;
  indexes: readonly Keys[];
}

function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

function carries(keys: Keys, values: Row): boolean {
  return keys.attributes.every((attribute) => present(values[attribute]));
}

function storedOf(entity: EntitySpec, name: string, value: unknown): unknown {
  return (entity.stored[name] as (value: unknown) => unknown)(value);
}

/** The item as stored: the attributes given, the entity marker, and the keys of the table and of every index
 * the item takes part in. */
function itemOf(entity: EntitySpec, values: Row): Row {
  const item: Row = Object.fromEntries(Object.entries(values).filter(([, value]) => present(value))
    .map(([name, value]) => [name, storedOf(entity, name, value)]));
  item[ENTITY_ATTRIBUTE] = entity.name;
  Object.assign(item, entity.table.build(values));
  for (const keys of entity.indexes) {
    if (carries(keys, values)) Object.assign(item, keys.build(values));
    else if (!keys.sparse) {
      throw new RangeError(`${entity.name} needs ${keys.attributes.filter((a) => !present(values[a])).join(", ")}`);
    }
  }
  return item;
}

function valuesOf(entity: EntitySpec, row: Row, names?: readonly string[]): Row {
  return Object.fromEntries((names ?? Object.keys(entity.read)).filter((name) => row[name] !== undefined)
    .map((name) => [name, ((entity.read[name] ?? ((value: unknown) => value)) as (value: unknown) => unknown)(row[name])]));
}

/** A read's item: the returned attributes of its entity (and the entity, when a read mixes several). */
function returned(entities: Record<string, [EntitySpec, readonly string[]]>, row: Row): Row {
  const all = Object.values(entities);
  if (all.length === 1) return valuesOf(all[0][0], row, all[0][1]);
  const name = String(row[ENTITY_ATTRIBUTE]);
  const [entity, names] = entities[name];
  return { [ENTITY_ATTRIBUTE]: name, ...valuesOf(entity, row, names) };
}

/** Only an absent item or one of this entity: never overwrite or delete another entity's item. */
function ownItemCondition(entity: EntitySpec): Record<string, unknown> {
  return { ConditionExpression: "attribute_not_exists(#pk) OR #entity = :entity",
    ExpressionAttributeNames: { "#pk": entity.table.names[0], "#entity": ENTITY_ATTRIBUTE },
    ExpressionAttributeValues: { ":entity": entity.name } };
}

async function putItem(client: DynamoDBDocumentClient, table: string, entity: EntitySpec, values: Row): Promise<void> {
  await client.send(new PutCommand({ TableName: table, Item: itemOf(entity, values), ...ownItemCondition(entity) }));
}

/** Only the attributes of the table key (a whole item may be passed as the key: its other values may be stale). */
function tableKeyOf(entity: EntitySpec, key: Row): Row {
  return Object.fromEntries(entity.table.attributes.filter((a) => a in key).map((a) => [a, key[a]]));
}

async function deleteItem(client: DynamoDBDocumentClient, table: string, entity: EntitySpec, key: Row): Promise<void> {
  await client.send(new DeleteCommand({ TableName: table, Key: entity.table.build(key), ...ownItemCondition(entity) }));
}

/** The item's values now (only `names`, when given), read strongly consistent. */
async function current(client: DynamoDBDocumentClient, table: string, entity: EntitySpec, key: Row,
  names?: readonly string[]): Promise<Row> {
  const input: GetCommand["input"] = { TableName: table, Key: entity.table.build(key), ConsistentRead: true };
  if (names !== undefined) {
    const read = [...names, ENTITY_ATTRIBUTE];
    input.ProjectionExpression = read.map((_, number) => `#a${number}`).join(", ");
    input.ExpressionAttributeNames = Object.fromEntries(read.map((name, number) => [`#a${number}`, name]));
  }
  const row = (await client.send(new GetCommand(input))).Item as Row | undefined;
  if (row === undefined || row[ENTITY_ATTRIBUTE] !== entity.name) {
    throw new ItemNotFound(`no ${entity.name} under ${JSON.stringify(key)}`);
  }
  return valuesOf(entity, row, names);
}

/** The placeholders of one request's expressions: `#n1` for names, `:v1` for values. */
class Expression {
  readonly names: Record<string, string> = { "#entity": ENTITY_ATTRIBUTE };
  readonly values: Record<string, unknown>;
  readonly conditions = ["#entity = :entity"];

  constructor(private readonly entity: EntitySpec) {
    this.values = { ":entity": entity.name };
  }

  name(attribute: string): string {
    const placeholder = `#n${Object.keys(this.names).length}`;
    this.names[placeholder] = attribute;
    return placeholder;
  }

  value(value: unknown): string {
    const placeholder = `:v${Object.keys(this.values).length}`;
    this.values[placeholder] = value;
    return placeholder;
  }

  /** Hold only while `attributes` have the values read (`current`): what was read has not changed since. */
  unchanged(current: Row, attributes: readonly string[]): void {
    for (const attribute of attributes) {
      this.conditions.push(attribute in current
        ? `${this.name(attribute)} = ${this.value(storedOf(this.entity, attribute, current[attribute]))}`
        : `attribute_not_exists(${this.name(attribute)})`);
    }
  }

  condition(): { ConditionExpression: string; ExpressionAttributeNames: Record<string, string>;
    ExpressionAttributeValues: Record<string, unknown> } {
    return { ConditionExpression: this.conditions.join(" AND "), ExpressionAttributeNames: this.names,
      ExpressionAttributeValues: this.values };
  }
}

/** Change attributes (null removes one). Index keys made of a changed attribute are rewritten (the others they
 * need are read first); a changed table key attribute moves the item: a delete and a put in one transaction.
 * Either holds only if what was read is unchanged (else DynamoDB refuses: read again). */
async function updateItem(client: DynamoDBDocumentClient, table: string, entity: EntitySpec, given: Row,
  changes: Row): Promise<void> {
  const changed = Object.keys(changes).sort();
  if (changed.length === 0) return;
  const key = tableKeyOf(entity, given);
  const tableKey = entity.table.build(key);
  if (JSON.stringify(entity.table.build({ ...key, ...changes })) !== JSON.stringify(tableKey)) {
    const now = await current(client, table, entity, key);
    const guard = new Expression(entity);
    guard.unchanged(now, Object.keys(entity.read).sort());
    await client.send(new TransactWriteCommand({ TransactItems: [
      { Delete: { TableName: table, Key: tableKey, ...guard.condition() } },
      { Put: { TableName: table, Item: itemOf(entity, { ...now, ...changes }),
        ConditionExpression: "attribute_not_exists(#pk)", ExpressionAttributeNames: { "#pk": entity.table.names[0] } } },
    ] }));
    return;
  }
  const affected = entity.indexes.filter((keys) => keys.attributes.some((a) => changed.includes(a)));
  const needed = [...new Set(affected.flatMap((keys) => keys.attributes))]
    .filter((a) => !changed.includes(a) && !(a in key)).sort();
  const now = needed.length > 0 ? await current(client, table, entity, key, needed) : {};
  const values: Row = { ...key, ...now, ...changes };
  const expression = new Expression(entity);
  const sets = changed.filter((a) => present(changes[a]))
    .map((a) => `${expression.name(a)} = ${expression.value(storedOf(entity, a, changes[a]))}`);
  const removes = changed.filter((a) => !present(changes[a])).map((a) => expression.name(a));
  for (const keys of affected) { // a local index shares the table's partition key, which stays as it is
    const rewritten = keys.names.filter((name) => !entity.table.names.includes(name));
    if (carries(keys, values)) {
      const built = keys.build(values);
      sets.push(...rewritten.map((name) => `${expression.name(name)} = ${expression.value(built[name])}`));
    } else if (keys.sparse) {
      removes.push(...rewritten.map((name) => expression.name(name)));
    } else {
      throw new RangeError(`${entity.name} needs ${keys.attributes.filter((a) => !present(values[a])).join(", ")}`);
    }
  }
  expression.unchanged(now, needed);
  const update = [sets.length > 0 ? `SET ${sets.join(", ")}` : "", removes.length > 0 ? `REMOVE ${removes.join(", ")}` : ""]
    .filter((part) => part !== "").join(" ");
  try {
    await client.send(new UpdateCommand({ TableName: table, Key: tableKey, UpdateExpression: update,
      ...expression.condition() }));
  } catch (error) {
    if (needed.length === 0 && error instanceof Error && error.name === "ConditionalCheckFailedException") {
      throw new ItemNotFound(`no ${entity.name} under ${JSON.stringify(key)}`);
    }
    throw error;
  }
}

// --- generated from the blueprint ---
