/**
 * Walks parsed JSON values without recursion. `JSON.parse` builds values of any depth (V8's parser
 * is iterative), but a recursive walk over one, `JSON.stringify`, and the string conversion
 * superstruct uses in its messages all run out of stack on a body nested some 10,000 deep: a
 * 400 KB body can nest 200,000 deep. Admin bounds the depth of every body it reads
 * ({@link MAX_BODY_DEPTH}) with {@link findTooDeep} before anything else looks at it.
 */

/** Most arrays and objects nested inside one another in an admin request body (the root counts as 1). */
export const MAX_BODY_DEPTH = 128;

/** A JSON path: member names and array indexes from the root. */
export type JsonPath = Array<string | number>;

/** A path as a linked list from the leaf up, so the walk allocates one small node per value. */
interface PathNode {
  segment: string | number;
  up: PathNode | null;
}

function toPath(node: PathNode | null): JsonPath {
  const path: JsonPath = [];
  for (let n = node; n; n = n.up) path.push(n.segment);
  return path.reverse();
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Visits every value of `root` depth-first in document order, member names before their values.
 * @param stop called with each value (or member name, `isName` true) and its depth (root: 0, a
 *   member of the root: 1); returning true ends the walk there.
 * @returns the path of the value (or of the member, for a name) `stop` returned true for, or null.
 */
export function findInJson(root: unknown, stop: (value: unknown, depth: number, isName: boolean) => boolean): JsonPath | null {
  // Three parallel stacks (value, where, depth); a member name is pushed as a value with depth -1 - depth.
  const values: unknown[] = [root];
  const places: Array<PathNode | null> = [null];
  const depths: number[] = [0];
  while (values.length > 0) {
    const value = values.pop();
    const at = places.pop()!;
    let depth = depths.pop()!;
    const isName = depth < 0;
    if (isName) depth = -1 - depth;
    if (stop(value, depth, isName)) return toPath(at);
    if (isName) continue;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) {
        values.push(value[i]);
        places.push({ segment: i, up: at });
        depths.push(depth + 1);
      }
    } else if (isObject(value)) {
      const keys = Object.keys(value);
      for (let i = keys.length - 1; i >= 0; i--) {
        const place = { segment: keys[i]!, up: at };
        values.push(value[keys[i]!], keys[i]);
        places.push(place, place);
        depths.push(depth + 1, -1 - (depth + 1));
      }
    }
  }
  return null;
}

/**
 * The path of the first array or object nested deeper than `maxDepth` containers (the root
 * container is 1 deep, as in proxy/json-scan.ts), or null when none is.
 */
export function findTooDeep(root: unknown, maxDepth: number = MAX_BODY_DEPTH): JsonPath | null {
  return findInJson(root, (value, depth, isName) => !isName && depth >= maxDepth && typeof value === 'object' && value !== null);
}
