import {
  GraphQLError,
  Kind,
  type ASTVisitor,
  type FieldNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
} from 'graphql';
import { MAX_LIST_LIMIT } from '../tables/record-schema.js';

/** Deepest field nesting an operation may have (introspection fields aside). */
export const MAX_QUERY_DEPTH = 10;
/** Largest estimated number of fields an operation may resolve. */
export const MAX_QUERY_COST = 50_000;
/**
 * What one statement that reads a table counts as, in fields: a page of records, and the count of
 * `total`, which scans every record matching the filter whatever the page's `limit` (0 included).
 * An operation makes at most MAX_QUERY_COST / STATEMENT_COST of them.
 */
export const STATEMENT_COST = 1000;

interface Measure {
  depth: number;
  cost: number;
}

/**
 * Validation rules that refuse an operation nested deeper than MAX_QUERY_DEPTH or whose
 * estimated cost passes MAX_QUERY_COST. Cost counts each field once per item its enclosing lists
 * may return: a field with a `limit` argument multiplies what it selects by that limit (its default
 * when absent, 500 when it is a variable). A page of records (a root field with a `limit`) also
 * counts STATEMENT_COST for its statement, and its `total` STATEMENT_COST for the count, which
 * the page's `limit` does not multiply. Introspection (`__schema`, `__type`) is not counted.
 */
export const queryLimitRules = [
  (context: ValidationContext): ASTVisitor => ({
    OperationDefinition(operation: OperationDefinitionNode) {
      const fragments = new Map<string, FragmentDefinitionNode>();
      for (const definition of context.getDocument().definitions) {
        if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
      }
      const walk = { fragments, visiting: new Set<string>(), measured: new Map<string, Measure>(), paged: pagedFields(context) };
      const measure = measureSelection(operation.selectionSet, walk, ROOT);
      if (measure.depth > MAX_QUERY_DEPTH) {
        context.reportError(new GraphQLError(`Query is nested ${measure.depth} levels deep; the limit is ${MAX_QUERY_DEPTH}`, { nodes: operation }));
      }
      if (measure.cost > MAX_QUERY_COST) {
        context.reportError(
          new GraphQLError(
            `Query may resolve about ${measure.cost} fields; the limit is ${MAX_QUERY_COST} (lower a limit argument or select fewer fields)`,
            { nodes: operation },
          ),
        );
      }
    },
  }),
];

interface Walk {
  fragments: Map<string, FragmentDefinitionNode>;
  visiting: Set<string>;
  /** Each fragment is measured once: spreads of spreads would otherwise double the walk at every level. */
  measured: Map<string, Measure>;
  /** Fields that take a `limit` argument with a default: lists of that many items when it is left out. */
  paged: ReadonlyMap<string, number>;
}

/**
 * Where a selection is: at the operation's root (where a field with a `limit` is a page of records),
 * in such a page (its `items` are `limit` items, its `total` a count), or elsewhere.
 */
type Place = { kind: 'root' } | { kind: 'page'; limit: number } | { kind: 'nested' };
const ROOT: Place = { kind: 'root' };
const NESTED: Place = { kind: 'nested' };

function pagedFields(context: ValidationContext): ReadonlyMap<string, number> {
  const paged = new Map<string, number>();
  for (const [name, field] of Object.entries(context.getSchema().getQueryType()?.getFields() ?? {})) {
    const limit = field.args.find((argument) => argument.name === 'limit');
    if (typeof limit?.defaultValue === 'number') paged.set(name, limit.defaultValue);
  }
  return paged;
}

function measureSelection(selectionSet: SelectionSetNode, walk: Walk, place: Place): Measure {
  let depth = 0;
  let cost = 0;
  for (const selection of selectionSet.selections) {
    let inner: Measure;
    if (selection.kind === Kind.FIELD) {
      inner = measureField(selection, walk, place);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      inner = measureSelection(selection.selectionSet, walk, place);
    } else {
      const measured = measureFragment(selection.name.value, walk, place);
      if (!measured) continue;
      inner = measured;
    }
    depth = Math.max(depth, inner.depth);
    cost += inner.cost;
  }
  return { depth, cost };
}

/**
 * A fragment's depth and cost depend only on the place it is spread in; undefined for an unknown
 * fragment or a cycle.
 */
function measureFragment(name: string, walk: Walk, place: Place): Measure | undefined {
  const key = place.kind === 'page' ? `${name} page ${place.limit}` : `${name} ${place.kind}`;
  const known = walk.measured.get(key);
  if (known) return known;
  const fragment = walk.fragments.get(name);
  if (!fragment || walk.visiting.has(name)) return undefined;
  walk.visiting.add(name);
  const measure = measureSelection(fragment.selectionSet, walk, place);
  walk.visiting.delete(name);
  walk.measured.set(key, measure);
  return measure;
}

function measureField(field: FieldNode, walk: Walk, place: Place): Measure {
  const name = field.name.value;
  if (name.startsWith('__')) return { depth: 0, cost: 0 };
  if (place.kind === 'page' && name === 'total') return { depth: 1, cost: STATEMENT_COST };
  if (!field.selectionSet) return { depth: 1, cost: 1 };
  if (place.kind === 'page' && name === 'items') {
    const inner = measureSelection(field.selectionSet, walk, NESTED);
    return { depth: inner.depth + 1, cost: 1 + inner.cost * place.limit };
  }
  if (place.kind === 'root' && walk.paged.has(name)) {
    const inner = measureSelection(field.selectionSet, walk, { kind: 'page', limit: listSize(field, walk) });
    return { depth: inner.depth + 1, cost: STATEMENT_COST + inner.cost };
  }
  const inner = measureSelection(field.selectionSet, walk, NESTED);
  return { depth: inner.depth + 1, cost: 1 + inner.cost * listSize(field, walk) };
}

function listSize(field: FieldNode, walk: Walk): number {
  const limit = field.arguments?.find((argument) => argument.name.value === 'limit');
  if (!limit) return walk.paged.get(field.name.value) ?? 1;
  if (limit.value.kind === Kind.INT) return Math.min(Math.max(Number(limit.value.value), 0), MAX_LIST_LIMIT);
  return MAX_LIST_LIMIT;
}
