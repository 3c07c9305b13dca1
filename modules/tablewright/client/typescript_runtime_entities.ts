// --- entities and their writes (typescript.py joins this file to typescript_runtime.ts) ---

/** The key attributes an entity writes for the table or an index (`names`: partition key, sort key), made of its
 * `attributes`; an item without one of them stays out of a `sparse` index. */
interface Keys { names: readonly string[]; attributes: readonly string[]; build: (values: Row) => Row; sparse: boolean }

interface EntitySpec {
  name: string;
  stored: Record<string, (value: never) => unknown>; // attribute -> its stored value
  read: Record<string, (value: never) => unknown>; // attribute -> its value from the stored one
  table: Keys;
  indexes: readonly Keys[];
  formers?: Record<string, string>; // a renamed attribute -> its old name, read too until migrated
  former?: string; // the entity's old name, which old items carry until migrated
  moved?: Keys; // the table key old items carry until migrated
}

const present = (value: unknown): boolean => value !== undefined && value !== null;

const storedOf = (entity: EntitySpec, name: string, value: unknown): unknown =>
  (entity.stored[name] as (value: unknown) => unknown)(value);

/** Whether an item of `values` takes part in an index (one it must, but cannot, take part in: an error). */
function carries(entity: EntitySpec, keys: Keys, values: Row): boolean {
  const missing = keys.attributes.filter((attribute) => !present(values[attribute]));
  if (missing.length > 0 && !keys.sparse) throw new RangeError(`${entity.name} needs ${missing.join(", ")}`);
  return missing.length === 0;
}

/** The item as stored: its attributes, the entity marker, the keys of the table and of each index it is in. */
function itemOf(entity: EntitySpec, values: Row): Row {
  const item: Row = Object.fromEntries(Object.entries(values).filter(([, value]) => present(value))
    .map(([name, value]) => [name, storedOf(entity, name, value)]));
  item[ENTITY_ATTRIBUTE] = entity.name;
  Object.assign(item, entity.table.build(values));
  for (const keys of entity.indexes) if (carries(entity, keys, values)) Object.assign(item, keys.build(values));
  return item;
}

function valuesOf(entity: EntitySpec, row: Row, names?: readonly string[]): Row {
  const stored = (name: string): unknown => (name in row ? row[name] : row[entity.formers?.[name] ?? ""]);
  const read = (name: string) => (entity.read[name] ?? ((v: unknown) => v)) as (value: unknown) => unknown; // PK: text
  return Object.fromEntries((names ?? Object.keys(entity.read)).filter((name) => stored(name) !== undefined)
    .map((name) => [name, read(name)(stored(name))]));
}

/** A read's item: the returned attributes of its entity (and the entity, when a read mixes several). */
function returned(entities: Record<string, [EntitySpec, readonly string[]]>, row: Row): Row {
  const all = Object.values(entities);
  if (all.length === 1) return valuesOf(all[0][0], row, all[0][1]);
  const [entity, names] = entities[String(row[ENTITY_ATTRIBUTE])];
  return { [ENTITY_ATTRIBUTE]: entity.name, ...valuesOf(entity, row, names) };
}

/** That the item carries one of the entity's names in `_entity` (`#entity`): the condition and its values. */
const marker = (entity: EntitySpec): [string, Row] => (entity.former === undefined
  ? ["#entity = :entity", { ":entity": entity.name }]
  : ["#entity IN (:entity, :former)", { ":entity": entity.name, ":former": entity.former }]);

/** Only an absent item or one of this entity: never overwrite or delete another entity's item. */
const ownItemCondition = (entity: EntitySpec): Row => ({
  ConditionExpression: `attribute_not_exists(#pk) OR ${marker(entity)[0]}`,
  ExpressionAttributeNames: { "#pk": entity.table.names[0], "#entity": ENTITY_ATTRIBUTE },
  ExpressionAttributeValues: marker(entity)[1] });

/** The table key an old item of `values` still carries while a migration moves it, where it differs (null: none,
 * or `values` lack what it is made of). */
function oldKey(entity: EntitySpec, values: Row): Row | null {
  if (entity.moved === undefined || entity.moved.attributes.some((a) => !present(values[a]))) return null;
  const old = entity.moved.build(values);
  return JSON.stringify(old) === JSON.stringify(entity.table.build(values)) ? null : old;
}

async function putItem(client: DynamoDBDocumentClient, table: string, entity: EntitySpec, values: Row): Promise<void> {
  const [item, old] = [itemOf(entity, values), oldKey(entity, values)];
  if (old === null) {
    await client.send(new PutCommand({ TableName: table, Item: item, ...ownItemCondition(entity) }));
    return;
  }
  await client.send(new TransactWriteCommand({ TransactItems: [ // the item in the new shape only
    { Put: { TableName: table, Item: item, ...ownItemCondition(entity) } },
    { Delete: { TableName: table, Key: old, ...ownItemCondition(entity) } }] }));
}

async function deleteItem(client: DynamoDBDocumentClient, table: string, entity: EntitySpec, key: Row): Promise<void> {
  const old = oldKey(entity, key);
  if (old === null) {
    await client.send(new DeleteCommand({ TableName: table, Key: entity.table.build(key), ...ownItemCondition(entity) }));
    return;
  }
  await client.send(new TransactWriteCommand({ TransactItems: [entity.table.build(key), old]
    .map((where) => ({ Delete: { TableName: table, Key: where, ...ownItemCondition(entity) } })) }));
}

/** The item's values now (only `names`, when given), read strongly consistent. */
async function current(client: DynamoDBDocumentClient, table: string, entity: EntitySpec, where: Row,
  names?: readonly string[]): Promise<Row> {
  const read = names === undefined ? {} : projection([...names, ENTITY_ATTRIBUTE]);
  const row = (await client.send(new GetCommand({ TableName: table, Key: where, ConsistentRead: true, ...read }))).Item;
  const markers = [entity.name, entity.former];
  if (row !== undefined && markers.includes(row[ENTITY_ATTRIBUTE] as string)) return valuesOf(entity, row, names);
  throw new ItemNotFound(`no ${entity.name} under ${JSON.stringify(where)}`);
}

/** The placeholders of one request's expressions (`#n1`, `:v1`) and its condition: an item of the entity. */
class Expression {
  readonly names: Record<string, string> = { "#entity": ENTITY_ATTRIBUTE };
  readonly values: Row;
  readonly conditions: string[];

  constructor(private readonly entity: EntitySpec) {
    const [condition, values] = marker(entity);
    [this.conditions, this.values] = [[condition], { ...values }];
  }

  name(attribute: string): string {
    const placeholder = `#n${Object.keys(this.names).length}`;
    this.names[placeholder] = attribute;
    return placeholder;
  }

  /** `#n1 = :v1`: an attribute's new value in an update, the value it must have in a condition. */
  assign(attribute: string, value: unknown): string {
    const [name, placeholder] = [this.name(attribute), `:v${Object.keys(this.values).length + 1}`];
    this.values[placeholder] = value;
    return `${name} = ${placeholder}`;
  }

  /** Hold only while `attributes` have the values read (`current`): what was read has not changed since. */
  unchanged(current: Row, attributes: readonly string[]): void {
    this.conditions.push(...attributes.map((attribute) => (attribute in current
      ? this.assign(attribute, storedOf(this.entity, attribute, current[attribute]))
      : `attribute_not_exists(${this.name(attribute)})`)));
  }

  condition(): Row {
    return { ConditionExpression: this.conditions.join(" AND "), ExpressionAttributeNames: this.names,
      ExpressionAttributeValues: this.values };
  }
}

/** Change attributes (null removes one) and the index keys made of them; a changed table key moves the item, and
 * so does an item still under the old key a migration moves it from. */
async function updateItem(client: DynamoDBDocumentClient, table: string, entity: EntitySpec, given: Row,
  changes: Row): Promise<void> {
  if (Object.keys(changes).length === 0) return;
  // Only the table key's attributes of `given`: a whole item may be passed as the key, its other values stale.
  const key = Object.fromEntries(entity.table.attributes.filter((a) => a in given).map((a) => [a, given[a]]));
  const old = oldKey(entity, key);
  try {
    if (JSON.stringify(entity.table.build({ ...key, ...changes })) !== JSON.stringify(entity.table.build(key))) {
      await moveItem(client, table, entity, entity.table.build(key), changes);
    } else {
      await updateInPlace(client, table, entity, key, changes);
    }
  } catch (error) {
    if (!(error instanceof ItemNotFound) || old === null) throw error;
    await moveItem(client, table, entity, old, changes);
  }
}

/** Move the item under the key `where` to the key its values with `changes` make, in one transaction that holds
 * only if what was read is unchanged. */
async function moveItem(client: DynamoDBDocumentClient, table: string, entity: EntitySpec, where: Row,
  changes: Row): Promise<void> {
  const expression = new Expression(entity);
  const now = await current(client, table, entity, where);
  expression.unchanged(now, Object.keys(entity.read).sort());
  await client.send(new TransactWriteCommand({ TransactItems: [
    { Delete: { TableName: table, Key: where, ...expression.condition() } },
    { Put: { TableName: table, Item: itemOf(entity, { ...now, ...changes }), ConditionExpression:
      "attribute_not_exists(#pk)", ExpressionAttributeNames: { "#pk": entity.table.names[0] } } },
  ] }));
}

async function updateInPlace(client: DynamoDBDocumentClient, table: string, entity: EntitySpec, key: Row,
  changes: Row): Promise<void> {
  const [changed, tableKey, expression] = [Object.keys(changes).sort(), entity.table.build(key), new Expression(entity)];
  const affected = entity.indexes.filter((keys) => keys.attributes.some((a) => changed.includes(a)));
  const needed = [...new Set(affected.flatMap((keys) => keys.attributes))]
    .filter((a) => !changed.includes(a) && !(a in key)).sort();
  const now = needed.length > 0 ? await current(client, table, entity, tableKey, needed) : {};
  const values: Row = { ...key, ...now, ...changes };
  const sets = changed.filter((a) => present(changes[a]))
    .map((a) => expression.assign(a, storedOf(entity, a, changes[a])));
  if (entity.former !== undefined) sets.push(expression.assign(ENTITY_ATTRIBUTE, entity.name));
  const removes = changed.filter((a) => !present(changes[a])).map((a) => expression.name(a));
  for (const keys of affected) { // a local index shares the table's partition key, which stays as it is
    const rewritten = keys.names.filter((name) => !entity.table.names.includes(name));
    const built = carries(entity, keys, values) ? keys.build(values) : undefined;
    if (built === undefined) removes.push(...rewritten.map((name) => expression.name(name)));
    else sets.push(...rewritten.map((name) => expression.assign(name, built[name])));
  }
  expression.unchanged(now, needed);
  const update = Object.entries({ SET: sets, REMOVE: removes }).filter(([, parts]) => parts.length > 0)
    .map(([verb, parts]) => `${verb} ${parts.join(", ")}`).join(" ");
  try {
    await client.send(new UpdateCommand({ TableName: table, Key: tableKey, UpdateExpression: update,
      ...expression.condition() }));
  } catch (error) {
    const missing = needed.length === 0 && error instanceof Error && error.name === "ConditionalCheckFailedException";
    throw missing ? new ItemNotFound(`no ${entity.name} under ${JSON.stringify(key)}`) : error;
  }
}

// --- generated from the blueprint ---
